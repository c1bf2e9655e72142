// Package hubserve is a stand-in for the Hugging Face hub, to be run on a
// loopback port: it serves repositories kept in a directory through the
// routes that msrag's hub client and huggingface_hub use, and plain files
// beside them (a release archive). CI runs README's commands against it
// (scripts/real-user.sh, with scripts/hubserve as its command); tests start
// it with [New] and httptest.
//
// # The directory
//
//	ROOT/datasets/ORG/NAME/COMMIT/...       the files of dataset ORG/NAME at COMMIT
//	ROOT/models/ORG/NAME/COMMIT/...         the files of model ORG/NAME at COMMIT
//	ROOT/{datasets,models}/ORG/NAME/refs/R  a file holding the COMMIT that branch or tag R names
//	ROOT/files/PATH                         served as it is at /files/PATH
//
// COMMIT is 40 lower-case hex digits; a repository may hold several. A
// revision in a URL is a COMMIT or a name under refs/. A file is stored with
// Git LFS when the .gitattributes at the top of its COMMIT marks it
// filter=lfs (patterns as git reads them: one without a slash matches a file
// name at any depth, "**" any number of directories); the listing then gives
// its sha256, as the hub does, and the git blob id of its LFS pointer. A
// model repository for all-MiniLM-L6-v2 is
// ROOT/models/sentence-transformers/all-MiniLM-L6-v2/COMMIT/{.gitattributes,
// config.json, onnx/model.onnx, tokenizer.json, ...} with refs/main naming
// COMMIT. [AddRepo] lays a repository revision out (tests use it, linking
// large files from the cache rather than copying them).
//
// # The routes
//
//   - GET /api/{datasets,models}/ORG/NAME/revision/REV: {"id", "sha",
//     "siblings": [{"rfilename"}]}, as the hub's repo_info.
//   - GET /api/{datasets,models}/ORG/NAME/tree/REV[/DIR][?recursive=true]:
//     the entries of the top (or DIR), or of everything below with
//     recursive: {"type": "file"|"directory", "oid", "size", "path",
//     "lfs": {"oid", "size", "pointerSize"}}, in one page.
//   - GET and HEAD /datasets/ORG/NAME/resolve/REV/PATH and
//     /ORG/NAME/resolve/REV/PATH (models): the file, with Content-Length,
//     X-Repo-Commit and an ETag (the sha256 of an LFS file, else its git blob
//     id); ranges are served.
//   - GET and HEAD /files/PATH.
//
// An unknown repository, revision or file is a 404 with the hub's
// X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound) and
// X-Error-Message. With [Config.Token] set, a request without
// "Authorization: Bearer TOKEN" is a 401. Paths with "." or ".." segments
// are refused. File hashes are computed on first use and kept while the
// file's size and modification time stay the same. [Server.Requests] counts
// the requests, for tests that a second use asks nothing.
package hubserve
