#!/usr/bin/env bash
# Puts an evaluation data set into CACHE/data/NAME/ in BEIR layout, CACHE being msrag's
# cache directory ($MSRAG_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/msrag):
#
#   corpus.jsonl.gz    one {"_id", "title", "text"} object per line
#   queries.jsonl.gz   one {"_id", "text"} object per line
#   qrels/<split>.tsv  query-id<TAB>corpus-id<TAB>score, with a header line
#
#   scripts/fetch-data.sh NAME           fetch NAME (scifact, qmsum) unless already present
#   scripts/fetch-data.sh --check NAME   print present/missing; exit 1 when missing
#
# Sources, in order:
#   1. a shared copy in ../shared/data/NAME (relative to the repository root), copied;
#   2. the dataset mteb/NAME of the Hugging Face hub, downloaded with curl from
#      $MSRAG_HF_ENDPOINT (the hub's base URL; revision $MSRAG_HF_REVISION, default
#      main) and converted: the .jsonl files are gzip-compressed (gzip -n -9), the
#      qrels .tsv files are kept as they are. Only scifact has such a source; the
#      qmsum set here (232 meetings, train/dev splits) exists only as the shared copy.
#
# The set is assembled in a temporary directory next to its destination and renamed
# into place once complete, so an interrupted run leaves nothing half-written; a
# second run finds it present and does nothing.
#
# Environment (mainly for tests): MSRAG_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/msrag), MSRAG_SHARED_DATA (default ../shared/data relative to the repository root).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/fetch-data.sh [--check] NAME   (NAME: scifact, qmsum)" >&2
  exit 2
fi
name=$1

case "$name" in
  scifact) hub_files=(corpus.jsonl queries.jsonl qrels/test.tsv qrels/train.tsv) ;;
  qmsum) hub_files=() ;;
  *)
    echo "fetch-data: unknown data set \"$name\" (known: scifact, qmsum)" >&2
    exit 2
    ;;
esac

cache=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
shared=${MSRAG_SHARED_DATA:-$(cd "$root/.." && pwd)/shared/data}/$name
dest=$cache/data/$name
say() { printf '%-10s %-8s %s\n' data "$1" "$2"; }

# complete DIR: the three parts are there, the .gz files are intact.
complete() {
  local d=$1
  [[ -s $d/corpus.jsonl.gz && -s $d/queries.jsonl.gz ]] || return 1
  compgen -G "$d/qrels/*.tsv" >/dev/null || return 1
  gzip -t "$d/corpus.jsonl.gz" "$d/queries.jsonl.gz" 2>/dev/null || return 1
}

if complete "$dest"; then
  say present "$dest"
  exit 0
fi
if ((check)); then
  say missing "$dest"
  exit 1
fi

mkdir -p "$cache/data"
tmp=$(mktemp -d "$cache/data/.$name.tmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/qrels"

if [[ -d $shared ]]; then
  for f in corpus.jsonl.gz queries.jsonl.gz; do
    [[ -f $shared/$f ]] || { echo "fetch-data: $shared has no $f" >&2; exit 1; }
    cp "$shared/$f" "$tmp/$f"
  done
  compgen -G "$shared/qrels/*.tsv" >/dev/null || { echo "fetch-data: $shared has no qrels/*.tsv" >&2; exit 1; }
  cp "$shared"/qrels/*.tsv "$tmp/qrels/"
  from="copied from $shared"
else
  if ((${#hub_files[@]} == 0)); then
    echo "fetch-data: no shared copy at $shared, and $name has no download source: copy the data set there" >&2
    exit 1
  fi
  if [[ -z ${MSRAG_HF_ENDPOINT:-} ]]; then
    echo "fetch-data: no shared copy at $shared; set MSRAG_HF_ENDPOINT to the Hugging Face hub's base URL to download mteb/$name" >&2
    exit 1
  fi
  command -v curl >/dev/null || { echo "fetch-data: curl is needed to download mteb/$name" >&2; exit 1; }
  base=${MSRAG_HF_ENDPOINT%/}/datasets/mteb/$name/resolve/${MSRAG_HF_REVISION:-main}
  for f in "${hub_files[@]}"; do
    mkdir -p "$tmp/raw/$(dirname "$f")"
    if ! curl -fsSL --retry 3 --connect-timeout 20 -o "$tmp/raw/$f" "$base/$f"; then
      echo "fetch-data: downloading $base/$f failed" >&2
      exit 1
    fi
    if [[ ! -s $tmp/raw/$f ]]; then
      echo "fetch-data: $base/$f is empty" >&2
      exit 1
    fi
  done
  gzip -n -9 -c "$tmp/raw/corpus.jsonl" >"$tmp/corpus.jsonl.gz"
  gzip -n -9 -c "$tmp/raw/queries.jsonl" >"$tmp/queries.jsonl.gz"
  cp "$tmp"/raw/qrels/*.tsv "$tmp/qrels/"
  rm -rf "$tmp/raw"
  from="downloaded from mteb/$name"
fi

if ! complete "$tmp"; then
  echo "fetch-data: the files for $name are incomplete or damaged; nothing was installed" >&2
  exit 1
fi
chmod -R u+w,go+rX "$tmp"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
say fetched "$dest ($from)"
