#!/usr/bin/env bash
# Installs the ONNX exporter that msrag runs for a sentence-transformers model that has
# model.safetensors and no ONNX file (msrag model import DIR, or a hub model without one):
# a venv with torch, transformers, onnx and sentence-transformers, each package pinned by
# version and sha256 in scripts/export-requirements.txt, and a copy of scripts/st_export.py.
# About 6 GB on disk (torch's Linux wheels bring the CUDA libraries, which it needs to
# import); the export itself runs on the CPU. Idempotent.
#
#   scripts/setup-export.sh           install unless present (quick when present)
#   scripts/setup-export.sh --check   print present/missing; exit 1 if missing
#
# The venv is $MSRAG_CACHE/venv/export (default ${XDG_CACHE_HOME:-$HOME/.cache}/msrag/venv/export),
# where msrag looks for it; EXPORT_PYTHON picks the interpreter that makes it (default python3;
# the pinned wheels are CPython 3.11 and 3.12 on Linux x86_64).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
venv="$cache/venv/export"
req="$root/scripts/export-requirements.txt"
python=${EXPORT_PYTHON:-python3}

check=0
[[ "${1:-}" == "--check" ]] && check=1
say() { printf '%-10s %-8s %s\n' "$1" "$2" "$3"; }
die() { echo "setup-export: $*" >&2; exit 1; }

# works: the venv has the pinned packages, imports them, and carries this checkout's
# st_export.py and requirements.
works() {
  [[ -x "$venv/bin/python" ]] || return 1
  cmp -s "$root/scripts/st_export.py" "$venv/st_export.py" || return 1
  cmp -s "$req" "$venv/export-requirements.txt" || return 1
  "$venv/bin/python" -c 'import torch, transformers, onnx, sentence_transformers' >/dev/null 2>&1
}

if works; then
  say export present "$venv"
  exit 0
fi
if ((check)); then
  say export missing "$venv; run scripts/setup-export.sh"
  exit 1
fi

command -v "$python" >/dev/null || die "no $python; set EXPORT_PYTHON to a Python 3.11 or 3.12 interpreter"
# A venv records its own path, so it is made in place; works() above tells a half-made one.
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv" || die "$python -m venv failed (on Debian's own python3, apt-get install python3-venv)"
"$venv/bin/python" -m pip --disable-pip-version-check --quiet install --no-cache-dir --require-hashes --only-binary=:all: -r "$req" ||
  die "installing the pinned packages of $req failed (their wheels are pinned for CPython 3.11 and 3.12 on Linux x86_64; this is $("$venv/bin/python" -V 2>&1), $(uname -m))"
cp "$root/scripts/st_export.py" "$venv/st_export.py"
cp "$req" "$venv/export-requirements.txt"
works || die "the venv $venv does not import torch, transformers, onnx and sentence_transformers"
say export installed "$venv ($("$venv/bin/python" -V 2>&1), torch 2.15.0, transformers 5.25.0)"
