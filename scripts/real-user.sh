#!/usr/bin/env bash
# CI's real user: README's commands run as a new user runs them, on a fresh clone of the
# repository in a folder with nothing beside it, with a home of its own and an empty msrag
# cache, against a loopback stand-in for the Hugging Face hub (scripts/hubserve) that also
# serves FAISS's release archive:
#
#   1. the stand-in's files: the dataset mteb/scifact in its published layout (corpus.jsonl,
#      queries.jsonl under Git LFS, qrels/test.tsv and qrels/train.tsv, README.md,
#      .gitattributes) at the revision MTEB pins, and faiss-1.15.0.tar.gz holding
#      faiss-1.15.0/faiss/**.h and LICENSE, both made from a local mirror: MSRAG_DATA_MIRROR
#      (its scifact/) and MSRAG_FAISS_HEADERS (FAISS 1.15.0's headers), which .ci/run sets
#      where the machine has such a mirror, else the copies in msrag's cache that make setup
#      (SciFact) and make check-gpu-build (the headers, checked against their manifest) put there;
#   2. git clone of this repository's HEAD into WORK/msrag (no WORK/shared beside it);
#   3. the user's environment: HOME=WORK/home (so the cache is WORK/home/.cache/msrag, empty),
#      no MSRAG_* or HF_* variable but HF_ENDPOINT (the stand-in) and MSRAG_FAISS_ARCHIVE_URL
#      (its archive); the caches of go, pip, npm and Maven are this machine's, reused;
#   4. in the clone, README's commands: make setup; make demo DEMO_DOCS=300, whose summary
#      table must print; make setup GPU=1 && make build GPU=1, whose bin/msrag must find
#      every library (ldd) and take libfaiss from bin/lib. Each step's time is printed.
#   5. between the demo and the GPU build, a hub model and MTEB tasks by name, with the
#      bin/msrag make demo built, an empty cache of its own and a second stand-in serving the
#      hub's sentence-transformers/all-MiniLM-L6-v2 (the sentence-transformers save make setup
#      fetched, the built-in model's ONNX file as onnx/model.onnx, the hub's .gitattributes),
#      a copy of it whose prompts are {"query": "query: ", "document": "passage: "}, mteb/scifact
#      cut to 20 test queries, their documents and 50 others (scripts/subset-dataset.sh), mteb/arguana
#      (cmd/msrag/testdata/hub/mteb-arguana-tiny), each at the revision mteb pins: msrag eval
#      --dataset mteb:SciFact --model hf:sentence-transformers/all-MiniLM-L6-v2 (the model
#      fetched on first use with max tokens 256), msrag model fetch of the copy (exactly those
#      prefixes) and msrag eval --dataset mteb:ArguAna (its rule applied).
#
#   scripts/real-user.sh      (WORK: a new directory under ${TMPDIR:-/tmp}, removed when every
#                             step passed; MSRAG_REAL_USER_KEEP=1 keeps it)
#
# It clones what is committed: uncommitted changes are not tried. Prints PASS/FAIL per step
# and exits 1 at the first failure, leaving WORK and the step's log for a look.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Without those variables, the copies make setup put in this machine's msrag cache (SciFact,
# and the headers make setup GPU=1 or make check-gpu-build checked against their manifest).
machine_cache=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
data_mirror=${MSRAG_DATA_MIRROR:-$machine_cache/data}
headers=${MSRAG_FAISS_HEADERS:-$machine_cache/gpu/headers/faiss}
[[ -f $data_mirror/scifact/corpus.jsonl.gz ]] || { echo "real-user: $data_mirror/scifact has no corpus.jsonl.gz (MSRAG_DATA_MIRROR names a mirror holding scifact/; make setup fetches it into the cache)" >&2; exit 1; }
[[ -f $headers/faiss/Index.h ]] || { echo "real-user: $headers has no faiss/Index.h (MSRAG_FAISS_HEADERS names FAISS 1.15.0's headers; make check-gpu-build fetches them into the cache)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/msrag-real-user.XXXXXX")
now() { date +%s; }
t_start=$(now)
step_t=$t_start
pass() { echo "PASS $* ($(($(now) - step_t)) s)"; step_t=$(now); }
fail() { echo "FAIL $* ($(($(now) - step_t)) s); everything is in $work" >&2; exit 1; }

# ---- 1. what the stand-in serves ----------------------------------------------------------
hub=$work/hub
# The revision mteb's SciFact task pins (the generated table of package mteb), which
# msrag data fetch hf:mteb/scifact asks for.
rev=$(sed -n 's/.*Dataset: "mteb\/scifact", Revision: "\([0-9a-f]\{40\}\)".*/\1/p' "$root/mteb/tasks_gen.go" | sort -u)
[[ $rev =~ ^[0-9a-f]{40}$ ]] || fail "no one revision of mteb/scifact in mteb/tasks_gen.go: $rev"
ds=$hub/datasets/mteb/scifact/$rev
mkdir -p "$ds/qrels" "$hub/datasets/mteb/scifact/refs" "$hub/files"
gunzip -c "$data_mirror/scifact/corpus.jsonl.gz" >"$ds/corpus.jsonl"
gunzip -c "$data_mirror/scifact/queries.jsonl.gz" >"$ds/queries.jsonl"
cp "$data_mirror/scifact/qrels/test.tsv" "$data_mirror/scifact/qrels/train.tsv" "$ds/qrels/"
printf '%s\n' '*.jsonl filter=lfs diff=lfs merge=lfs -text' '*.parquet filter=lfs diff=lfs merge=lfs -text' >"$ds/.gitattributes"
printf '%s\n' '# SciFact' '' 'mteb/scifact as the stand-in serves it (scripts/real-user.sh).' >"$ds/README.md"
echo "$rev" >"$hub/datasets/mteb/scifact/refs/main"
# (the cache keeps the headers only: its archive has no LICENSE, which setup does not read)
archived=(faiss); [[ -f $headers/LICENSE ]] && archived+=(LICENSE)
tar -czf "$hub/files/faiss-1.15.0.tar.gz" -C "$headers" --transform 's,^,faiss-1.15.0/,' "${archived[@]}"
pass "stand-in files: mteb/scifact@$rev, faiss-1.15.0.tar.gz"

# ---- 2. the clone ---------------------------------------------------------------------------
git clone --quiet "$root" "$work/msrag"
[[ ! -e $work/shared ]] || fail "$work/shared exists"
pass "git clone $(git -C "$work/msrag" rev-parse --short HEAD) into $work/msrag"

# ---- 3. the stand-in and the user's environment ----------------------------------------------
(cd "$work/msrag" && go build -o "$work/hubserve" ./scripts/hubserve)
"$work/hubserve" -root "$hub" >"$work/hub.url" 2>"$work/hub.log" &
hub_pid=$!
trap 'kill "$hub_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [[ -s $work/hub.url ]] && break; sleep 0.1; done
endpoint=$(head -1 "$work/hub.url")
[[ $endpoint == http://127.0.0.1:* ]] || fail "the stand-in did not start: $(cat "$work/hub.log")"

# The package managers' caches and settings stay this machine's: only msrag's things are new.
go_env=$(go env GOENV) go_path=$(go env GOPATH) go_mod=$(go env GOMODCACHE) go_cache=$(go env GOCACHE)
pip_cache=$(python3 -m pip cache dir 2>/dev/null || echo "$HOME/.cache/pip")
npm_cache=$(npm config get cache 2>/dev/null || echo "$HOME/.npm")
npm_rc=$HOME/.npmrc m2=$HOME/.m2/repository
mkdir -p "$work/home"
user_env=()
for kv in $(compgen -e); do
  case $kv in MSRAG_* | HF_* | HUGGING_FACE_* | TRANSFORMERS_* | XDG_* | HOME | GOENV | GOPATH | GOMODCACHE | GOCACHE | PIP_CACHE_DIR | npm_config_cache | NPM_CONFIG_USERCONFIG | MAVEN_OPTS) continue ;; esac
  user_env+=("$kv=${!kv}")
done
user_env+=(HOME="$work/home" HF_ENDPOINT="$endpoint" MSRAG_FAISS_ARCHIVE_URL="$endpoint/files/faiss-1.15.0.tar.gz"
  GOENV="$go_env" GOPATH="$go_path" GOMODCACHE="$go_mod" GOCACHE="$go_cache" PIP_CACHE_DIR="$pip_cache"
  npm_config_cache="$npm_cache" MAVEN_OPTS="-Dmaven.repo.local=$m2")
[[ -f $npm_rc ]] && user_env+=(NPM_CONFIG_USERCONFIG="$npm_rc")
as_user() { (cd "$work/msrag" && env -i "${user_env[@]}" "$@"); }
pass "stand-in at $endpoint; HOME=$work/home"

# ---- 4. README's commands ---------------------------------------------------------------------
as_user make setup >"$work/setup.log" 2>&1 || { tail -30 "$work/setup.log"; fail "make setup"; }
cache=$work/home/.cache/msrag
[[ -f $cache/data/hf--mteb--scifact@$rev/.hub-fetch.json ]] || fail "make setup: SciFact did not come through msrag data fetch"
grep -q "headers .*installed.*from $endpoint/files/faiss-1.15.0.tar.gz" "$work/setup.log" || fail "make setup: FAISS's headers did not come from the archive"
pass "make setup (empty cache, SciFact and FAISS's headers from the stand-in)"

as_user make demo DEMO_DOCS=300 >"$work/demo.log" 2>&1 || { tail -30 "$work/demo.log"; fail "make demo DEMO_DOCS=300"; }
grep '^| hybrid |' "$work/demo.log" | head -1 | grep -q 'rrf:windows=all' || { tail -30 "$work/demo.log"; fail "make demo DEMO_DOCS=300: no summary table"; }
grep -A4 '^| channels |' "$work/demo.log"
pass "make demo DEMO_DOCS=300"

# ---- 5. a hub model and MTEB tasks by name ------------------------------------------------------
# A second stand-in, as the first serves all of mteb/scifact at the revision mteb pins, and a cache
# of its own, as the user's holds that already.
hub2=$work/hub2 cache2=$work/cache2
minilm=$hub2/models/sentence-transformers/all-MiniLM-L6-v2/1111111111111111111111111111111111111111
mkdir -p "$minilm/onnx" "$hub2/models/sentence-transformers/all-MiniLM-L6-v2/refs"
(cd "$cache/st/all-minilm-l6-v2" && find . -type f ! -name '.*' -exec cp --parents {} "$minilm/" \;)
cp "$cache/models/all-minilm-l6-v2/model.onnx" "$minilm/onnx/model.onnx"
printf '*.%s filter=lfs diff=lfs merge=lfs -text\n' bin h5 msgpack onnx ot pt safetensors zip >"$minilm/.gitattributes"
echo "${minilm##*/}" >"$hub2/models/sentence-transformers/all-MiniLM-L6-v2/refs/main"
prompts=$hub2/models/stand-in/all-MiniLM-L6-v2-prompts
mkdir -p "$prompts/refs" && cp -r "$minilm" "$prompts/" && echo "${minilm##*/}" >"$prompts/refs/main"
printf '%s\n' '{"prompts": {"query": "query: ", "document": "passage: "}, "default_prompt_name": null}' >"$prompts/${minilm##*/}/config_sentence_transformers.json"
as_user scripts/subset-dataset.sh "$data_mirror/scifact" "$work/scifact-q20" test 50 20 >/dev/null
ds2=$hub2/datasets/mteb/scifact/$rev
mkdir -p "$ds2/qrels" && cp "$ds/.gitattributes" "$ds/README.md" "$ds2/"
gunzip -c "$work/scifact-q20/corpus.jsonl.gz" >"$ds2/corpus.jsonl"
gunzip -c "$work/scifact-q20/queries.jsonl.gz" >"$ds2/queries.jsonl"
cp "$work/scifact-q20/qrels/test.tsv" "$ds2/qrels/"
arguana_rev=$(sed -n 's/.*Dataset: "mteb\/arguana", Revision: "\([0-9a-f]\{40\}\)".*/\1/p' "$root/mteb/tasks_gen.go" | sort -u)
mkdir -p "$hub2/datasets/mteb/arguana" && cp -r "$root/cmd/msrag/testdata/hub/mteb-arguana-tiny" "$hub2/datasets/mteb/arguana/$arguana_rev"
cp "$ds/.gitattributes" "$hub2/datasets/mteb/arguana/$arguana_rev/"
"$work/hubserve" -root "$hub2" >"$work/hub2.url" 2>"$work/hub2.log" &
hub2_pid=$!
trap 'kill "$hub_pid" "$hub2_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [[ -s $work/hub2.url ]] && break; sleep 0.1; done
as_user2() { as_user env HF_ENDPOINT="$(head -1 "$work/hub2.url")" MSRAG_CACHE="$cache2" "$@"; }
json() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

as_user2 bin/msrag eval --dataset mteb:SciFact --model hf:sentence-transformers/all-MiniLM-L6-v2 --out "$work/hf-scifact" >"$work/hf.log" 2>&1 ||
  { tail -30 "$work/hf.log"; fail "msrag eval --dataset mteb:SciFact --model hf:sentence-transformers/all-MiniLM-L6-v2"; }
grep -A4 '^| dataset |' "$work/hf.log"
model_json=$cache2/models/hf--sentence-transformers--all-MiniLM-L6-v2/msrag-model.json
[[ $(json "$model_json" 'd["max_tokens"], d["sources"]["max_tokens"]') == "(256, 'sentence_bert_config.json max_seq_length')" ]] ||
  fail "hf:sentence-transformers/all-MiniLM-L6-v2: $model_json does not record max tokens 256 from sentence_bert_config.json"
[[ $(json "$work/hf-scifact/results.json" 'd["mteb"]["task"], d["mteb"]["dataset_revision"], d["windows"], d["queries"]') == "('SciFact', '$rev', [100, 200, 254], 20)" ]] ||
  fail "msrag eval --dataset mteb:SciFact: results.json is not SciFact at $rev with windows 100,200,254 over 20 queries"
as_user2 bin/msrag model fetch hf:stand-in/all-MiniLM-L6-v2-prompts >>"$work/hf.log" 2>&1 || { tail -30 "$work/hf.log"; fail "msrag model fetch hf:stand-in/all-MiniLM-L6-v2-prompts"; }
[[ $(json "$cache2/models/hf--stand-in--all-MiniLM-L6-v2-prompts/msrag-model.json" 'd["query_prefix"], d["passage_prefix"]') == "('query: ', 'passage: ')" ]] ||
  fail "hf:stand-in/all-MiniLM-L6-v2-prompts: not the prefixes of its prompts"
as_user2 bin/msrag eval --dataset mteb:ArguAna --model hf:sentence-transformers/all-MiniLM-L6-v2 --out "$work/hf-arguana" >>"$work/hf.log" 2>&1 ||
  { tail -30 "$work/hf.log"; fail "msrag eval --dataset mteb:ArguAna"; }
[[ $(json "$work/hf-arguana/results.json" 'd["scoring"]["ignore_identical_ids"] and d["scoring"]["dropped"] > 0 and "task ArguAna" in d["scoring"]["source"]') == True ]] ||
  fail "msrag eval --dataset mteb:ArguAna: its rule was not applied"
pass "hf:sentence-transformers/all-MiniLM-L6-v2 on first use (256 tokens), its prompts copy, mteb:SciFact and mteb:ArguAna from a stand-in"

as_user bash -c 'make setup GPU=1 && make build GPU=1' >"$work/gpu.log" 2>&1 || { tail -30 "$work/gpu.log"; fail "make setup GPU=1 && make build GPU=1"; }
ldd "$work/msrag/bin/msrag" >"$work/ldd.txt"
if grep -q 'not found' "$work/ldd.txt" || ! grep -q "libfaiss.so => $work/msrag/bin/lib/" "$work/ldd.txt"; then
  cat "$work/ldd.txt"
  fail "make build GPU=1: bin/msrag's libraries"
fi
pass "make setup GPU=1 && make build GPU=1 (bin/msrag links libfaiss, cudart and cuBLAS from bin/lib)"

echo "real-user: every step passed in $(($(now) - t_start)) s"
if [[ -z ${MSRAG_REAL_USER_KEEP:-} ]]; then
  kill "$hub_pid" "$hub2_pid" 2>/dev/null || true
  wait "$hub_pid" "$hub2_pid" 2>/dev/null || true
  chmod -R u+w "$work" && rm -rf "$work"
fi
