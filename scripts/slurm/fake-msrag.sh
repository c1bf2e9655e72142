#!/usr/bin/env bash
# A stand-in for `msrag index` that tests the Slurm scripts without a model or an index.
#
#   fake-msrag.sh index --corpus C --out DIR --shard i/n [more args...]
#
# Writes DIR/manifest.json (through a temporary sibling renamed into place, like msrag) that
# records the corpus, the shard (as msrag does: "i/n"), "docs": 1 and every argument.
# FAKE_MSRAG_FAIL_SHARD=i   exit 1 for shard i (tests failure handling)
# FAKE_MSRAG_SLEEP=s        sleep s seconds first (simulates work)
# FAKE_MSRAG_CALLS=file     append one line per call: the shard
set -euo pipefail
[[ ${1:-} == index ]] || { echo "fake-msrag: only 'index' is supported" >&2; exit 2; }
shift
all=("$@")
corpus="" out="" shard=""
while (($#)); do
  case $1 in
    --corpus) corpus=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --shard) shard=$2; shift 2 ;;
    *) shift ;;
  esac
done
[[ -n $corpus && -n $out ]] || { echo "fake-msrag: --corpus and --out are required" >&2; exit 2; }
[[ -n ${FAKE_MSRAG_CALLS:-} ]] && echo "${shard:-all}" >>"$FAKE_MSRAG_CALLS"
[[ -n ${FAKE_MSRAG_SLEEP:-} ]] && sleep "$FAKE_MSRAG_SLEEP"
if [[ -n ${FAKE_MSRAG_FAIL_SHARD:-} && ${shard%%/*} == "$FAKE_MSRAG_FAIL_SHARD" ]]; then
  echo "fake-msrag: failing shard $shard as asked" >&2
  exit 1
fi
[[ -e $out ]] && { echo "fake-msrag: $out exists" >&2; exit 1; }
json_str() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
tmp="$out.tmp.$$"
mkdir -p "$tmp"
{
  printf '{"fake": true, "docs": 1, "corpus": %s, "shard": %s, "host": %s, "args": [' \
    "$(json_str "$corpus")" "$(json_str "$shard")" "$(json_str "$(hostname -s)")"
  sep=""
  for a in "${all[@]}"; do printf '%s%s' "$sep" "$(json_str "$a")"; sep=", "; done
  printf ']}\n'
} >"$tmp/manifest.json"
mv "$tmp" "$out"
echo "fake-msrag: wrote $out (shard ${shard:-all})"
