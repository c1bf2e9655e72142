#!/usr/bin/env bash
# Installs the fp16 converter that msrag model fetch NAME --fp16 runs: a venv with ONNX
# Runtime's float16 converter (the onnxruntime and onnx wheels and their dependencies,
# each pinned by version and sha256 in scripts/fp16-requirements.txt) and a copy of
# scripts/fp16_convert.py. Idempotent.
#
#   scripts/setup-fp16.sh           install unless present (quick when present)
#   scripts/setup-fp16.sh --check   print present/missing; exit 1 if missing
#
# The venv is $MSRAG_CACHE/venv/fp16 (default ${XDG_CACHE_HOME:-$HOME/.cache}/msrag/venv/fp16),
# where msrag looks for it; FP16_PYTHON picks the interpreter that makes it (default python3;
# the pinned wheels are CPython 3.11 and 3.12 on Linux x86_64).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
venv="$cache/venv/fp16"
req="$root/scripts/fp16-requirements.txt"
python=${FP16_PYTHON:-python3}

check=0
[[ "${1:-}" == "--check" ]] && check=1
say() { printf '%-10s %-8s %s\n' "$1" "$2" "$3"; }
die() { echo "setup-fp16: $*" >&2; exit 1; }

# works: the venv has the pinned packages, imports the converter, and carries this
# checkout's fp16_convert.py and requirements.
works() {
  [[ -x "$venv/bin/python" ]] || return 1
  cmp -s "$root/scripts/fp16_convert.py" "$venv/fp16_convert.py" || return 1
  cmp -s "$req" "$venv/fp16-requirements.txt" || return 1
  "$venv/bin/python" -c 'from onnxruntime.transformers.float16 import convert_float_to_float16' >/dev/null 2>&1
}

if works; then
  say fp16 present "$venv"
  exit 0
fi
if ((check)); then
  say fp16 missing "$venv; run scripts/setup-fp16.sh"
  exit 1
fi

command -v "$python" >/dev/null || die "no $python; set FP16_PYTHON to a Python 3.11 or 3.12 interpreter"
# A venv records its own path, so it is made in place; works() above tells a half-made one.
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv" || die "$python -m venv failed (on Debian's own python3, apt-get install python3-venv)"
"$venv/bin/python" -m pip --disable-pip-version-check --quiet install --require-hashes --only-binary=:all: -r "$req" ||
  die "installing the pinned packages of $req failed (their wheels are pinned for CPython 3.11 and 3.12 on Linux x86_64; this is $("$venv/bin/python" -V 2>&1), $(uname -m))"
cp "$root/scripts/fp16_convert.py" "$venv/fp16_convert.py"
cp "$req" "$venv/fp16-requirements.txt"
works || die "the venv $venv does not import onnxruntime.transformers.float16"
say fp16 installed "$venv ($("$venv/bin/python" -V 2>&1), onnxruntime 1.30.0)"
