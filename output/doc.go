// Package output writes what msrag computes in the formats its users read:
// search results ([RunWriter]: TREC run files, JSON lines with the evidence
// of every hit, Parquet) and embeddings ([VectorWriter]: JSON lines, NumPy
// .npy, Parquet). Formats are typed ([RunFormat], [VectorFormat]) and parsed
// in one place each.
package output
