#!/usr/bin/env bash
# Puts evaluation data sets into CACHE/data/NAME/ in BEIR layout, CACHE being msrag's
# cache directory ($MSRAG_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/msrag):
#
#   corpus.jsonl.gz    one {"_id", "title", "text"} object per line
#   queries.jsonl.gz   one {"_id", "text"} object per line
#   qrels/<split>.tsv  query-id<TAB>corpus-id<TAB>score, with a header line
#
#   scripts/fetch-data.sh NAME...           fetch each NAME unless it is present
#   scripts/fetch-data.sh --check NAME...   print present/missing; exit 1 when one is missing
#
# Where each set comes from:
#   scifact, nfcorpus    the dataset mteb/NAME of the Hugging Face hub, at the revision MTEB
#                        pins, fetched by msrag data fetch (one client: the hub is
#                        $MSRAG_HF_ENDPOINT, else $HF_ENDPOINT, else https://huggingface.co;
#                        $HF_TOKEN, HF_HUB_OFFLINE as huggingface_hub reads them: hub/doc.go)
#                        into CACHE/data/hf--mteb--NAME@REVISION, then laid out here: the
#                        .jsonl files gzip-compressed (gzip -n -9), the qrels as they are.
#   qmsum, qmsum-lembed, qmsum-summaries
#                        only from a local mirror: no public source serves them in this form
#                        (what they are: docs/setup.md, "Data sets").
#
#   MSRAG_DATA_MIRROR=DIR  a local mirror of data sets, DIR/NAME in the layout above: a set
#                          found there is copied instead of fetched (CI names one).
#   MSRAG_BIN=PATH         the msrag command (default: bin/msrag, built when stale;
#                          scripts/msrag-bin.sh).
#
# A set is assembled in a temporary directory beside its destination and renamed into
# place once complete, so an interrupted run leaves nothing half-written; a second run
# finds it present and does nothing. Every name is checked before anything is fetched.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
usage() {
  echo "usage: scripts/fetch-data.sh [--check] NAME...   (NAME: scifact, nfcorpus, qmsum, qmsum-lembed, qmsum-summaries)" >&2
  exit 2
}
check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
(($# > 0)) || usage
for name in "$@"; do
  case "$name" in
    scifact | nfcorpus | qmsum | qmsum-lembed | qmsum-summaries) ;;
    *) echo "fetch-data: unknown data set \"$name\" (known: scifact, nfcorpus, qmsum, qmsum-lembed, qmsum-summaries)" >&2; exit 2 ;;
  esac
done

cache=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
export MSRAG_CACHE=$cache
mirror=${MSRAG_DATA_MIRROR:-}
say() { printf '%-10s %-8s %s\n' data "$1" "$2"; }
die() { echo "fetch-data: $*" >&2; exit 1; }

# complete DIR: the three parts are there, the .gz files are intact.
complete() {
  local d=$1
  [[ -s $d/corpus.jsonl.gz && -s $d/queries.jsonl.gz ]] || return 1
  compgen -G "$d/qrels/*.tsv" >/dev/null || return 1
  gzip -t "$d/corpus.jsonl.gz" "$d/queries.jsonl.gz" 2>/dev/null || return 1
}

# from_mirror SRC TMP: copies the set at SRC.
from_mirror() {
  local src=$1 tmp=$2 f
  for f in corpus.jsonl.gz queries.jsonl.gz; do
    [[ -f $src/$f ]] || die "$src has no $f"
    cp "$src/$f" "$tmp/$f"
  done
  compgen -G "$src/qrels/*.tsv" >/dev/null || die "$src has no qrels/*.tsv"
  cp "$src"/qrels/*.tsv "$tmp/qrels/"
}

# from_hub NAME TMP: fetches hf:mteb/NAME with msrag and lays it out in TMP.
from_hub() {
  local name=$1 tmp=$2 msrag src part
  msrag=$("$root/scripts/msrag-bin.sh")
  src=$("$msrag" data fetch "hf:mteb/$name") || die "msrag data fetch hf:mteb/$name failed (above)"
  for part in corpus queries; do
    if [[ -f $src/$part.jsonl.gz ]]; then
      cp "$src/$part.jsonl.gz" "$tmp/"
    elif [[ -f $src/$part.jsonl ]]; then
      gzip -n -9 -c "$src/$part.jsonl" >"$tmp/$part.jsonl.gz"
    else
      die "$src holds no $part.jsonl (the repository's layout changed?): msrag eval --dataset $src takes it as it is"
    fi
  done
  compgen -G "$src/qrels/*.tsv" >/dev/null || die "$src holds no qrels/*.tsv: msrag eval --dataset $src takes it as it is"
  cp "$src"/qrels/*.tsv "$tmp/qrels/"
  echo "$src"
}

status=0
for name in "$@"; do
  dest=$cache/data/$name
  if complete "$dest"; then
    say present "$dest"
    continue
  fi
  if ((check)); then
    say missing "$dest"
    status=1
    continue
  fi
  mkdir -p "$cache/data"
  tmp=$(mktemp -d "$cache/data/.$name.tmp.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/qrels"
  if [[ -n $mirror && -d $mirror/$name ]]; then
    from_mirror "$mirror/$name" "$tmp"
    from="copied from the mirror $mirror/$name"
  elif [[ $name == scifact || $name == nfcorpus ]]; then
    from="from $(from_hub "$name" "$tmp")"
  elif [[ -n $mirror ]]; then
    die "$name exists only in a local mirror, and MSRAG_DATA_MIRROR=$mirror has no $name/"
  else
    die "$name exists only in a local mirror (no public source serves it in this form): set MSRAG_DATA_MIRROR to a directory holding $name/ (corpus.jsonl.gz, queries.jsonl.gz, qrels/*.tsv)"
  fi
  complete "$tmp" || die "the files for $name are incomplete or damaged; nothing was installed"
  chmod -R u+w,go+rX "$tmp"
  rm -rf "$dest"
  mv "$tmp" "$dest"
  trap - EXIT
  say fetched "$dest ($from)"
done
exit "$status"
