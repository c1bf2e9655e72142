#!/usr/bin/env bash
# Makes the venv of the metrics check: pytrec_eval (pytrec_eval-terrier 0.5.11) and what it pulls
# in, each pinned by version and sha256 in scripts/eval-requirements.txt. The check command msrag
# eval prints (runs/check_metrics.py) runs with its python3, and the tests that run that command
# find it. make setup runs this with MSRAG_SETUP_EVAL=1 (CI sets it). Idempotent.
#
#   scripts/setup-eval.sh           install unless present (quick when present)
#   scripts/setup-eval.sh --check   print present/missing; exit 1 if missing
#
# The venv is $MSRAG_CACHE/venv/eval (default ${XDG_CACHE_HOME:-$HOME/.cache}/msrag/venv/eval);
# EVAL_PYTHON picks the interpreter that makes it (default python3; the pinned wheels are CPython
# 3.11 and 3.12 on Linux x86_64).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
venv="$cache/venv/eval"
req="$root/scripts/eval-requirements.txt"
python=${EVAL_PYTHON:-python3}

check=0
[[ "${1:-}" == "--check" ]] && check=1
say() { printf '%-10s %-8s %s\n' "$1" "$2" "$3"; }
die() { echo "setup-eval: $*" >&2; exit 1; }

# works: the venv has this checkout's pinned packages and imports pytrec_eval.
works() {
  [[ -x "$venv/bin/python3" ]] || return 1
  cmp -s "$req" "$venv/eval-requirements.txt" || return 1
  "$venv/bin/python3" -c 'import pytrec_eval' >/dev/null 2>&1
}

if works; then
  say eval present "$venv"
  exit 0
fi
if ((check)); then
  say eval missing "$venv; run scripts/setup-eval.sh"
  exit 1
fi

command -v "$python" >/dev/null || die "no $python; set EVAL_PYTHON to a Python 3.11 or 3.12 interpreter"
# A venv records its own path, so it is made in place; works() above tells a half-made one.
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv" || die "$python -m venv failed (on Debian's own python3, apt-get install python3-venv)"
"$venv/bin/python3" -m pip --disable-pip-version-check --quiet install --require-hashes --only-binary=:all: -r "$req" ||
  die "installing the pinned packages of $req failed (their wheels are pinned for CPython 3.11 and 3.12 on Linux x86_64; this is $("$venv/bin/python3" -V 2>&1), $(uname -m))"
cp "$req" "$venv/eval-requirements.txt"
works || die "the venv $venv does not import pytrec_eval"
say eval installed "$venv ($("$venv/bin/python3" -V 2>&1), pytrec_eval-terrier 0.5.11)"
