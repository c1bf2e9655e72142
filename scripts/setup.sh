#!/usr/bin/env bash
# Installs everything msrag needs, and nothing twice, into msrag's cache: $MSRAG_CACHE,
# else ${XDG_CACHE_HOME:-$HOME/.cache}/msrag, the directory the msrag command itself uses
# (CACHE below). Nothing is installed outside it, and nothing needs root, unless
# --faiss-debian asks for Debian's FAISS.
#
#   scripts/setup.sh                 install what is missing (idempotent, quick when all is present)
#   scripts/setup.sh --check         print what is present and what is missing; exit 1 if anything is
#   scripts/setup.sh --gpu           what a GPU build needs instead of the CPU FAISS (make setup GPU=1)
#   scripts/setup.sh --faiss-debian  FAISS 1.7.3 and OpenBLAS from Debian instead of the faiss-cpu
#                                    wheel (make setup FAISS=debian; apt-get, as root or with sudo)
#
# Steps:
#   0. Prerequisites: the commands the steps run (go, gcc, g++, python3 with pip, npm, mvn, curl,
#      tar, gzip, unzip, sha256sum); setup names each one missing and stops.
#   1. FAISS: FAISS 1.15.0's CPU library from the faiss-cpu wheel, with the OpenBLAS and libgomp
#      it was built with, into CACHE/faiss-cpu/lib, and FAISS 1.15.0's headers from its release
#      archive, each checked against scripts/faiss-headers-v1.15.0.sha256, into CACHE/gpu/headers
#      (scripts/setup-gpu.sh --cpu-wheel). --gpu: the GPU library, CUDA's libraries and headers
#      and the GPU ONNX Runtime instead (scripts/setup-gpu.sh, docs/gpu.md). --faiss-debian:
#      Debian's libfaiss-dev and libopenblas-dev (apt-get).
#   2. ONNX Runtime: the Linux x64 CPU library carried by the onnxruntime-node npm package,
#      unpacked into CACHE/onnxruntime/ and checked against its sha256.
#   3. Models: the default model (e5-small-v2) and the fast ones for tests and the demo
#      (all-MiniLM-L6-v2, fp32 and int8), into CACHE/models/ by msrag model fetch
#      (scripts/fetch-model.sh builds bin/msrag for it, against steps 1 and 2); MSRAG_SETUP_MODELS
#      lists others (CI fetches every built-in model). With MSRAG_SETUP_FP16=1, also the fp16
#      converter and the fp16 files of the fp32 models (scripts/setup-fp16.sh; CI sets it). The
#      sentence-transformers save of all-MiniLM-L6-v2 (scripts/fetch-st-reference.sh), and with
#      MSRAG_SETUP_EXPORT=1 the ONNX exporter (scripts/setup-export.sh; CI sets it). With
#      MSRAG_SETUP_EVAL=1, the metrics check's pytrec_eval (scripts/setup-eval.sh; CI sets it).
#   4. Data: SciFact into CACHE/data/ (scripts/fetch-data.sh: the Hugging Face hub's
#      mteb/scifact, or the local mirror MSRAG_DATA_MIRROR names); MSRAG_SETUP_DATA lists
#      others (CI adds the sets the tests read).
#   5. Reference tokenizer files for the tokenizer's golden tests (scripts/fetch-tokenizers.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

check=0 faiss=wheel
for a in "$@"; do
  case "$a" in
    --check) check=1 ;;
    --gpu) faiss=gpu ;;
    --faiss-debian) faiss=debian ;;
    *) echo "usage: scripts/setup.sh [--check] [--gpu | --faiss-debian]" >&2; exit 2 ;;
  esac
done

cache=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
export MSRAG_CACHE=$cache
# The make build that scripts/fetch-model.sh runs links the FAISS installed here.
case $faiss in
  gpu) export GPU=1 ;;
  *) export GPU= FAISS=$faiss ;;
esac
missing=0
say() { printf '%-10s %-8s %s\n' "$1" "$2" "$3"; }

# ---- 0. Prerequisites -------------------------------------------------------------------
# command | what it is for | the Debian package that has it
prereqs=(
  "go|builds msrag (Go 1.26 or later)|https://go.dev/dl (Debian's golang is older)"
  "gcc|compiles msrag's cgo parts|gcc"
  "g++|compiles the FAISS binding's C++ shim|g++"
  "npm|fetches ONNX Runtime's library (npm pack onnxruntime-node)|npm"
  "mvn|fetches the built-in models' jars|maven"
  "curl|fetches FAISS's release archive|curl"
  "tar|unpacks FAISS's release archive|tar"
  "gzip|compresses the data sets|gzip"
  "sha256sum|checks what is fetched|coreutils"
  "python3|runs pip and scripts/subset-dataset.sh|python3"
)
prereqs+=("unzip|unpacks the wheels' files (FAISS's libraries, the sentence-transformers reference)|unzip")
lacking=()
for p in "${prereqs[@]}"; do
  IFS='|' read -r cmd why pkg <<<"$p"
  if command -v "$cmd" >/dev/null; then
    ((check)) && say tool present "$cmd"
  else
    say tool missing "$cmd: $why (Debian: $pkg)"
    lacking+=("$cmd")
  fi
done
if command -v python3 >/dev/null && ! python3 -m pip --version >/dev/null 2>&1; then
  say tool missing "python3 -m pip: fetches the wheels (FAISS, the sentence-transformers reference) (Debian: python3-pip)"
  lacking+=("pip")
fi
if [[ $faiss == debian ]] && ! command -v apt-get >/dev/null; then
  say tool missing "apt-get: FAISS=debian installs Debian's libfaiss-dev (use the default, the faiss-cpu wheel, elsewhere)"
  lacking+=("apt-get")
fi
if ((${#lacking[@]})); then
  if ((check)); then
    missing=1
  else
    echo "setup: missing ${lacking[*]}: install them (the lines above say what each is for) and run make setup again" >&2
    exit 1
  fi
fi

# ---- 1. FAISS ---------------------------------------------------------------------------
if [[ $faiss == debian ]]; then
  debs=(libfaiss-dev libopenblas-dev)
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
else
  gpu_args=()
  ((check)) && gpu_args+=(--check)
  [[ $faiss == wheel ]] && gpu_args+=(--cpu-wheel)
  scripts/setup-gpu.sh "${gpu_args[@]}" || { ((check)) && missing=1 || exit 1; }
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
  scripts/fetch-model.sh --check "${models[@]}" || missing=1
else
  scripts/fetch-model.sh "${models[@]}"
fi

# fp16 files (MSRAG_SETUP_FP16=1; CI sets it): the converter's venv (scripts/setup-fp16.sh), then
# model_fp16.onnx of every fp32 built-in model, checked against its recorded sha256.
if [[ -n ${MSRAG_SETUP_FP16:-} && ${MSRAG_SETUP_FP16} != 0 ]]; then
  fp16_models=(e5-small-v2 all-minilm-l6-v2 bge-small-en-v1.5)
  if ((check)); then
    scripts/setup-fp16.sh --check || missing=1
    scripts/fetch-model.sh --check --fp16 "${fp16_models[@]}" || missing=1
  else
    scripts/setup-fp16.sh
    scripts/fetch-model.sh --fp16 "${fp16_models[@]}"
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

# The metrics check's venv (MSRAG_SETUP_EVAL=1; CI sets it): pytrec_eval pinned by hash
# (scripts/setup-eval.sh), with which the tests run the check command msrag eval prints.
if [[ -n ${MSRAG_SETUP_EVAL:-} && ${MSRAG_SETUP_EVAL} != 0 ]]; then
  if ((check)); then
    MSRAG_CACHE=$cache scripts/setup-eval.sh --check || missing=1
  else
    MSRAG_CACHE=$cache scripts/setup-eval.sh
  fi
fi

# ---- 4. Data --------------------------------------------------------------------------
data=(${MSRAG_SETUP_DATA:-scifact})
if ((check)); then
  scripts/fetch-data.sh --check "${data[@]}" || missing=1
else
  scripts/fetch-data.sh "${data[@]}"
fi

# ---- 5. Reference tokenizers ------------------------------------------------------------
if ((check)); then
  scripts/fetch-tokenizers.sh --check || missing=1
else
  scripts/fetch-tokenizers.sh
fi

if ((check)); then
  if ((missing)); then
    echo "setup: something is missing; run scripts/setup.sh (or make setup)"
    exit 1
  fi
  echo "setup: everything is present"
fi
