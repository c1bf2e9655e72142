// Package store owns the index directory: its manifest, its tables, and how
// it is written and read.
//
// An index directory holds manifest.json ([Manifest], whose types are the
// public schema of package indexfile), docs.parquet (document
// ids and titles) and, per window, a FAISS index file and a chunk table
// ([ChunkTable]). It is written by a [Stage]: a temporary sibling directory,
// created while the caller holds the directory's [Lock], into which every file
// goes through a hashing writer ([Stage.Create]: the sha256 recorded in the
// manifest is computed as the bytes are written, never by reading them back),
// and which [Stage.Publish] renames into place once the manifest is written.
// Reading goes the other way: [ReadManifest], then [ReadFile] streams each
// file to its parser and checks its sha256 on the way.
//
// The lock is an flock'd file beside the directory (.NAME.lock). Whoever holds
// it may remove staging directories left by builds that were killed: only the
// holder writes one, so any other is stale.
package store
