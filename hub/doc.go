// Package hub downloads files from a Hugging Face hub, and fetches the
// retrieval datasets of MTEB from it into directories that
// [github.com/msrag/msrag/corpus.OpenDataset] opens.
//
// # The client
//
// A [Client] talks to one hub: [Options.Endpoint], else $MSRAG_HF_ENDPOINT
// (msrag's own), else $HF_ENDPOINT, else [DefaultEndpoint],
// https://huggingface.co, as huggingface_hub chooses it; a malformed one is an
// error wrapping [ErrEndpoint] that names where it came from. A token from
// [Options.Token], else $HF_TOKEN, $HUGGING_FACE_HUB_TOKEN or the file
// `hf auth login` writes ([TokenPath]; none of these with
// $HF_HUB_DISABLE_IMPLICIT_TOKEN) is sent as "Authorization: Bearer ..."; it
// appears in no log line and no error. With [Options.Offline] or
// $HF_HUB_OFFLINE (1, on, yes, true) no request is made: what is asked for
// must be present, else the error wraps [ErrOffline].
//
// The client uses three of the hub's HTTP endpoints, as the huggingface_hub
// library does (hf_api.py: list_repo_tree, repo_info; file_download.py:
// hf_hub_url):
//
//   - [Client.List]: GET {endpoint}/api/{models,datasets}/ORG/NAME/tree/REV?recursive=true,
//     a JSON array of entries {"type": "file"|"directory", "path", "size",
//     "oid", "lfs": {"oid", "size", "pointerSize"}}, where "oid" is the git
//     blob id and "lfs.oid" the sha256 of an LFS file's content; further
//     pages are linked from a Link header with rel="next".
//   - [Client.Commit]: GET {endpoint}/api/{models,datasets}/ORG/NAME/revision/REV,
//     whose "sha" is the commit a branch or tag names.
//   - [Client.Download]: GET {endpoint}/[datasets/]ORG/NAME/resolve/REV/PATH,
//     which may redirect to a content store.
//
// A download streams into a temporary file beside its destination
// ([github.com/msrag/msrag/internal/safefile]) while its sha256 is computed,
// and is renamed into place only when its size, and the sha256 (LFS files) or
// git blob id (other files) the listing gives, match; otherwise, and when
// its context is cancelled, nothing is left. Failed requests are [*Error]
// values that name the repository, the revision, the file, the URL and the
// HTTP status, wrapping [ErrNotFound], [ErrUnauthorized], [ErrStatus],
// [ErrTransfer] or [ErrIntegrity].
//
// # Datasets
//
// [FetchDataset] takes "mteb:TASK", "hf:mteb/NAME" or "hf:mteb/NAME@REVISION".
// A task is one of the pinned mteb's retrieval tasks (package mteb's table,
// generated from mteb's task metadata), fetched from the repository and at
// the revision it reads; a task whose data is not text, that has language
// subsets, or that reads a config of a repository of several data sets
// (dwzhu/LongEmbed) is refused ([ErrTask]). Without a revision, mteb/NAME
// must be read at one revision by the tasks over it ([PinnedRevision]);
// otherwise the error wraps [ErrRevision]. A branch or tag is resolved to
// its commit first, so that the listing and the downloads see the same
// files. [DatasetOptions.Offline] refuses a dataset that is not present.
//
// MTEB's dataset repositories come in several layouts over their history,
// and the listing decides which files are taken:
//
//   - corpus: the Parquet files of corpus/ (corpus/corpus-00000-of-00001.parquet
//     in BEIR's uploads, corpus/test-00000-of-00001.parquet in later MTEB
//     ones), else corpus.parquet, corpus.jsonl.gz or corpus.jsonl (the older
//     BEIR layout of mteb/scifact and mteb/nfcorpus at their pinned
//     revisions);
//   - queries: the same with queries/ and queries.*;
//   - qrels, for every split the repository has, of the best kind present:
//     qrels/<split>-NNNNN-of-NNNNN.parquet, qrels/<split>.parquet, the
//     shards of the "default" config in default/ or data/ (where the
//     datasets library's push_to_hub puts them), qrels/<split>.tsv, or
//     qrels/<split>.jsonl, which is rewritten as qrels/<split>.tsv.
//
// Other files (README.md, .gitattributes, other configs) are left out. A
// repository without one of the three parts is an error wrapping [ErrLayout]
// that lists what it holds. The files go into a temporary directory beside
// the target; the result is opened with the corpus package, which reads the
// first documents of every corpus file (checking their columns), all the
// queries and all the judgements, and only then is the directory renamed into
// place as DIR/hf--ORG--NAME@REVISION ([DatasetRef.DirName]), with a
// [StampFile] recording the repository, the revision, the commit and each
// file's size and sha256. A later fetch that finds the stamp, the files at
// their sizes and a directory that opens returns at once, without a request.
package hub
