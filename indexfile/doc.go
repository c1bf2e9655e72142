// Package indexfile is the on-disk schema of an msrag index: the types of its
// manifest.json, as plain data with their JSON names.
//
// An index directory holds manifest.json ([Manifest]), docs.parquet (document
// ids and titles) and, per window ([WindowInfo]), a FAISS index file and a
// chunk table; the manifest names every file with its sha256. [ModelInfo]
// identifies the embedding model, and its [Origin] says how to open that
// model again: the name of the embedder kind that made it (package embed's
// registry) and the kind's parameters, which this package stores without
// interpreting them.
//
// Format 5 ([ChannelsFormatVersion]) is format 3 or 4 with a "channels"
// section: the records of kinds of channel beyond dense and lexical (package
// channel), each as its kind writes it. It is written only for an index
// that has such channels, so that an msrag that does not know them refuses
// the index by its version.
//
// Format 4 ([NoModelFormatVersion]) is format 3 for an index without dense
// windows (lexical windows only, cut by a tokenizer with no model): its
// model's name and origin kind are [NoModel], its windows have no FAISS
// file. It is written only for such an index, so that an msrag reading
// formats 1 to 3 refuses it by its version; every other index is written as
// format 3.
//
// Format 3 ([FormatVersion]) records the origin. Format 2 recorded a model
// behind an embedding server in a "remote" section and format 1 called the
// truncated window "full"; both are read and converted as they are decoded
// (a format 2 "remote" section becomes the origin of kind "openai" or "tei").
//
// Reading, writing, staging and locking an index directory are package
// msrag's business (msrag.ReadManifest); this package has no behaviour beyond
// decoding the older formats and comparing models ([ModelInfo.SameModel]).
package indexfile
