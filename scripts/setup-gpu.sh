#!/usr/bin/env bash
# Installs what a GPU build of msrag needs (make setup GPU=1, scripts/setup.sh --gpu) into
# msrag's cache ($MSRAG_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/msrag, CACHE below),
# from PyPI wheels fetched with pip (`pip download --no-deps` of exact versions), each
# checked against the sha256 pinned below. Only the shared libraries are unpacked.
#
#   scripts/setup-gpu.sh              install what is missing (quick when all is present)
#   scripts/setup-gpu.sh --check      print present/missing; exit 1 if anything is missing
#   scripts/setup-gpu.sh --headers    only the FAISS and CUDA headers (make check-gpu-build)
#   scripts/setup-gpu.sh --faiss-headers  only FAISS's headers (make docker-cuda)
#   scripts/setup-gpu.sh --cpu-wheel  FAISS's CPU library from faiss-cpu and FAISS's headers
#                                     (make setup: the default CPU build)
#   scripts/setup-gpu.sh --cpu-wheel --check
#
# What goes where:
#   CACHE/wheels/           the wheels, kept so that a rerun downloads nothing
#   CACHE/gpu/lib/          libfaiss.so of faiss-gpu 1.15.0 (CUDA 12) with the OpenBLAS,
#                           libgomp, libgfortran and libquadmath it was built with, and CUDA
#                           12.9's libcudart.so.12, libcublas.so.12, libcublasLt.so.12; plus
#                           the link-time names (libopenblas.so, libgomp.so, libcudart.so,
#                           libcublas.so) as symbolic links, so that -lopenblas and -lgomp
#                           find the wheel's copies and the process has one of each
#   CACHE/gpu/headers/      faiss/: FAISS 1.15.0's headers (the wheels have none); cuda/:
#                           the CUDA 12.9 headers they include (runtime, cuBLAS, nvcc's crt,
#                           CCCL, from NVIDIA's wheels)
#   CACHE/gpu/onnxruntime/  the GPU ONNX Runtime: libonnxruntime.so.1 and its CUDA provider
#   CACHE/faiss-cpu/lib/    (--cpu-wheel) libfaiss.so of faiss-cpu 1.15.0 with its libraries
#
# Variables:
#   MSRAG_CUDA=12|13        which ONNX Runtime GPU build: onnxruntime-gpu 1.26.0 (the last
#                           CUDA 12 build) or 1.31.1 (CUDA 13). Unset: the CUDA version that
#                           nvidia-smi reports for the driver (13 or later: 13); with no
#                           nvidia-smi, 12, and the script says so. FAISS's GPU library is a
#                           CUDA 12 build either way (a CUDA 13 driver runs it).
#   MSRAG_FAISS_ARCHIVE_URL the release archive FAISS's headers are taken from (default:
#                           GitHub's archive of tag v1.15.0, commit
#                           20f14b31a6d54e243a3d1de6ae193fc4c3ec18ed), for mirrors and tests
#   MSRAG_FAISS_HEADERS=DIR a directory holding faiss/*.h of that release, taken instead of
#                           the archive (a local mirror; CI names one)
#                           Either way every header must match scripts/faiss-headers-v1.15.0.sha256,
#                           the sha256 of each faiss/**/*.h and *.cuh of that commit (the archive's
#                           own bytes are not promised to stay the same; its files are): a changed,
#                           missing or added header is refused, named.
#   PIP                     the pip command (default: python3 -m pip)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
read -r -a pip <<<"${PIP:-python3 -m pip}"

check=0 mode=gpu
for a in "$@"; do
  case "$a" in
    --check) check=1 ;;
    --headers) mode=headers ;;
    --faiss-headers) mode=faiss-headers ;;
    --cpu-wheel) mode=cpu ;;
    *) echo "usage: scripts/setup-gpu.sh [--check] [--headers | --faiss-headers | --cpu-wheel]" >&2; exit 2 ;;
  esac
done
if [[ -n ${MSRAG_CUDA:-} && $MSRAG_CUDA != 12 && $MSRAG_CUDA != 13 ]]; then
  echo "setup-gpu: MSRAG_CUDA=$MSRAG_CUDA: want 12 or 13" >&2
  exit 2
fi
# Folders being filled, removed if the script stops before moving them into place.
tmps=()
trap 'rm -rf "${tmps[@]}"' EXIT

# ---- pins ------------------------------------------------------------------------------
# requirement | wheel file | sha256
w_faiss_gpu="faiss-gpu==1.15.0|faiss_gpu-1.15.0-cp310-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl|df2aa230c472866ba75a020c3ab2d5d94aab076c9ff070236d8d8a6b8f3ebff5"
w_faiss_cpu="faiss-cpu==1.15.0|faiss_cpu-1.15.0-cp310-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl|ec9b29aae29e428c085c2d49dbb02e4673cdea75db418d420f9e60e0b4184498"
w_cudart="nvidia-cuda-runtime-cu12==12.9.79|nvidia_cuda_runtime_cu12-12.9.79-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl|25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3"
w_cublas="nvidia-cublas-cu12==12.9.3.13|nvidia_cublas_cu12-12.9.3.13-py3-none-manylinux_2_27_x86_64.whl|d7d51055f161b317c7105ddaae90e71eda059026074ffef93cf7cde2886bfe72"
w_nvcc="nvidia-cuda-nvcc-cu12==12.9.86|nvidia_cuda_nvcc_cu12-12.9.86-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl|5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0"
w_cccl="nvidia-cuda-cccl-cu12==12.9.27|nvidia_cuda_cccl_cu12-12.9.27-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl|37869e17ce2e1ecec6eddf1927cca0f8c34e64fd848d40453df559091e2d7117"
w_ort12="onnxruntime-gpu==1.26.0|onnxruntime_gpu-1.26.0-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl|3c01119ed4d9449d60367fa8ccffcd02bd3fe736754284e4b198d131f54edad6"
w_ort13="onnxruntime-gpu==1.31.1|onnxruntime_gpu-1.31.1-cp312-cp312-manylinux_2_28_x86_64.whl|05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7"
faiss_version=1.15.0
faiss_archive_url=${MSRAG_FAISS_ARCHIVE_URL:-https://github.com/facebookresearch/faiss/archive/refs/tags/v$faiss_version.tar.gz}
faiss_manifest=$root/scripts/faiss-headers-v$faiss_version.sha256

wheels="$cache/wheels"
missing=0
say() { printf '%-10s %-8s %s\n' "$1" "$2" "$3"; }
die() { echo "setup-gpu: $*" >&2; exit 1; }

# wheel SPEC: the wheel's path in CACHE/wheels, downloaded when missing, checked by sha256.
wheel() {
  local req file sha
  IFS='|' read -r req file sha <<<"$1"
  local path="$wheels/$file"
  if [[ ! -f $path ]] || ! echo "$sha  $path" | sha256sum -c --status; then
    mkdir -p "$wheels"
    local dl
    dl=$(mktemp -d "$wheels/.dl.XXXXXX")
    "${pip[@]}" download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      --platform manylinux_2_12_x86_64 --platform manylinux2010_x86_64 --dest "$dl" "$req" >&2 ||
      { rm -rf "$dl"; die "pip download $req failed"; }
    [[ -f $dl/$file ]] || { rm -rf "$dl"; die "$req: pip fetched $(ls "$dl"), not $file"; }
    if ! echo "$sha  $dl/$file" | sha256sum -c --status; then
      local got
      got=$(sha256sum "$dl/$file" | cut -d' ' -f1)
      rm -rf "$dl"
      die "$file: sha256 $got, want $sha"
    fi
    mv "$dl/$file" "$path"
    rm -rf "$dl"
  fi
  echo "$path"
}

# stamp SPEC...: what a unit is made of (the wheels' sha256), written last into its folder.
stamp() { local s; for s in "$@"; do echo "${s##*|}"; done; }
unit_ok() { [[ -f $1/.stamp && "$(cat "$1/.stamp")" == "$2" ]]; }

# finish TMP DEST STAMP: move a completed unit into place.
finish() {
  echo "$3" >"$1/.stamp"
  chmod 755 "$1"
  rm -rf "$2"
  mkdir -p "$(dirname "$2")"
  mv "$1" "$2"
}

# faiss_lib DEST FAISS_WHEEL [CUDA]: libfaiss.so and its bundled libraries, flat in DEST.
faiss_lib() {
  local dest=$1 fw=$2 cuda=${3:-} want
  want=$(stamp "$fw" ${cuda:+"$w_cudart" "$w_cublas"})
  local what="$dest (faiss ${fw%%|*}${cuda:+, CUDA 12.9 cudart and cuBLAS})"
  if unit_ok "$dest" "$want"; then say faiss present "$what"; return; fi
  if ((check)); then say faiss missing "$what"; missing=1; return; fi
  local tmp
  mkdir -p "$(dirname "$dest")"
  tmp=$(mktemp -d "$(dirname "$dest")/.tmp.XXXXXX")
  tmps+=("$tmp")
  unzip -q -j "$(wheel "$fw")" 'faiss/libfaiss.so' 'faiss_*.libs/*' -d "$tmp"
  if [[ -n $cuda ]]; then
    unzip -q -j "$(wheel "$w_cudart")" 'nvidia/cuda_runtime/lib/libcudart.so.12' -d "$tmp"
    unzip -q -j "$(wheel "$w_cublas")" 'nvidia/cublas/lib/libcublas.so.12' 'nvidia/cublas/lib/libcublasLt.so.12' -d "$tmp"
    ln -s libcudart.so.12 "$tmp/libcudart.so"
    ln -s libcublas.so.12 "$tmp/libcublas.so"
  fi
  # The link-time names of the wheel's own OpenBLAS and libgomp (auditwheel renamed them).
  local blas=("$tmp"/libopenblas*.so) gomp=("$tmp"/libgomp-*.so*)
  ((${#blas[@]} == 1 && ${#gomp[@]} == 1)) || die "${fw%%|*}: want one OpenBLAS and one libgomp, found ${blas[*]##*/} ${gomp[*]##*/}"
  ln -s "${blas[0]##*/}" "$tmp/libopenblas.so"
  ln -s "${gomp[0]##*/}" "$tmp/libgomp.so"
  finish "$tmp" "$dest" "$want"
  say faiss installed "$what"
}

# header_diff DIR: names every header under DIR/faiss that differs from the manifest (changed,
# missing, or not in it); prints nothing when they all match.
header_diff() {
  local dir=$1
  (
    cd "$dir"
    find faiss -type f \( -name '*.h' -o -name '*.cuh' \) | LC_ALL=C sort >"$tmpd/have"
    cut -d' ' -f3- "$faiss_manifest" | LC_ALL=C sort >"$tmpd/want"
    LC_ALL=C comm -13 "$tmpd/have" "$tmpd/want" | sed 's/$/: missing/'
    LC_ALL=C comm -23 "$tmpd/have" "$tmpd/want" | sed 's/$/: not in the manifest/'
    sha256sum -c --quiet "$faiss_manifest" 2>/dev/null | grep -v ': FAILED open or read$' | sed 's/: FAILED$/: changed/' || true
  )
}

# faiss_headers: FAISS 1.15.0's headers into CACHE/gpu/headers/faiss/faiss, from
# MSRAG_FAISS_HEADERS or the release archive, every one checked against the manifest.
faiss_headers() {
  local dest="$cache/gpu/headers/faiss" src=${MSRAG_FAISS_HEADERS:-}
  local what="$dest (FAISS $faiss_version)" tmpd diff
  tmpd=$(mktemp -d)
  tmps+=("$tmpd")
  if unit_ok "$dest" "$faiss_version" && [[ -z $(header_diff "$dest") ]]; then say headers present "$what"; return; fi
  if ((check)); then say headers missing "$what"; missing=1; return; fi
  local tmp from
  mkdir -p "$cache/gpu/headers"
  tmp=$(mktemp -d "$cache/gpu/headers/.tmp.XXXXXX")
  tmps+=("$tmp")
  if [[ -n $src ]]; then
    from=$src
  else
    from=$faiss_archive_url
    curl -fsSL --retry 3 --connect-timeout 20 -o "$tmp/faiss.tar.gz" "$faiss_archive_url" ||
      die "downloading FAISS $faiss_version's headers from $faiss_archive_url failed (MSRAG_FAISS_ARCHIVE_URL names another copy of the archive, MSRAG_FAISS_HEADERS a directory)"
    mkdir "$tmp/src"
    tar -xzf "$tmp/faiss.tar.gz" -C "$tmp/src" --strip-components=1 --wildcards '*/faiss/*' ||
      die "$faiss_archive_url: not a tar.gz archive holding faiss/"
    src="$tmp/src"
  fi
  [[ -f $src/faiss/Index.h ]] || die "$from: no faiss/Index.h (MSRAG_FAISS_HEADERS names the directory above faiss/)"
  diff=$(header_diff "$src")
  [[ -z $diff ]] || die "$from: FAISS's headers differ from those of v$faiss_version (scripts/faiss-headers-v$faiss_version.sha256); refused:
$(head -20 <<<"$diff")"
  mkdir -p "$tmp/out"
  (cd "$src" && find faiss \( -name '*.h' -o -name '*.cuh' \) -exec install -D -m 644 {} "$tmp/out/{}" \;)
  finish "$tmp/out" "$dest" "$faiss_version"
  say headers installed "$what, from $from"
}

# cuda_headers: the CUDA 12.9 headers FAISS's GPU headers include (runtime, cuBLAS, nvcc's
# crt, CCCL) into CACHE/gpu/headers/cuda.
cuda_headers() {
  local dest="$cache/gpu/headers/cuda" want
  want=$(stamp "$w_cudart" "$w_cublas" "$w_nvcc" "$w_cccl")
  local what="$dest (CUDA 12.9)"
  if unit_ok "$dest" "$want"; then say headers present "$what"; return; fi
  if ((check)); then say headers missing "$what"; missing=1; return; fi
  local tmp w
  mkdir -p "$cache/gpu/headers"
  tmp=$(mktemp -d "$cache/gpu/headers/.tmp.XXXXXX")
  tmps+=("$tmp")
  for w in "$w_cudart" "$w_cublas" "$w_nvcc" "$w_cccl"; do
    unzip -q -o "$(wheel "$w")" 'nvidia/*/include/*' -d "$tmp/wheel"
  done
  mkdir -p "$tmp/out"
  for w in "$tmp"/wheel/nvidia/*/include; do cp -r "$w/." "$tmp/out/"; done
  finish "$tmp/out" "$dest" "$want"
  rm -rf "$tmp"
  say headers installed "$what"
}

# cuda_major: 12 or 13, from MSRAG_CUDA or the driver.
cuda_major() {
  if [[ -n ${MSRAG_CUDA:-} ]]; then
    echo "$MSRAG_CUDA"
    return
  fi
  if ! command -v nvidia-smi >/dev/null; then
    echo "setup-gpu: no nvidia-smi: CUDA 12 assumed for ONNX Runtime (MSRAG_CUDA=13 chooses the CUDA 13 build)" >&2
    echo 12
    return
  fi
  local v
  v=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9]*\)\..*/\1/p' | head -1)
  [[ -n $v ]] || die "nvidia-smi reports no CUDA version; set MSRAG_CUDA=12 or 13"
  ((v >= 12)) || die "the driver supports CUDA $v; FAISS's GPU library and ONNX Runtime need 12 or later"
  ((v >= 13)) && echo 13 || echo 12
}

# ort: the GPU ONNX Runtime for CUDA 12 or 13 into CACHE/gpu/onnxruntime.
ort() {
  local major spec dest="$cache/gpu/onnxruntime"
  major=$(cuda_major)
  [[ $major == 13 ]] && spec=$w_ort13 || spec=$w_ort12
  local what="$dest (${spec%%|*}, CUDA $major)"
  if unit_ok "$dest" "$(stamp "$spec")"; then say ort present "$what"; return; fi
  if ((check)); then say ort missing "$what"; missing=1; return; fi
  local tmp
  mkdir -p "$cache/gpu"
  tmp=$(mktemp -d "$cache/gpu/.tmp.XXXXXX")
  tmps+=("$tmp")
  unzip -q -j "$(wheel "$spec")" 'onnxruntime/capi/libonnxruntime.so.*' \
    'onnxruntime/capi/libonnxruntime_providers_cuda.so' 'onnxruntime/capi/libonnxruntime_providers_shared.so' -d "$tmp"
  mv "$tmp"/libonnxruntime.so.1.* "$tmp/libonnxruntime.so.1"
  finish "$tmp" "$dest" "$(stamp "$spec")"
  say ort installed "$what"
}

case $mode in
  headers) faiss_headers; cuda_headers ;;
  faiss-headers) faiss_headers ;;
  cpu) faiss_lib "$cache/faiss-cpu/lib" "$w_faiss_cpu"; faiss_headers ;;
  gpu)
    faiss_lib "$cache/gpu/lib" "$w_faiss_gpu" cuda
    faiss_headers
    cuda_headers
    ort
    ;;
esac
if ((check && missing)); then
  echo "setup-gpu: something is missing; run make setup GPU=1 (scripts/setup.sh --gpu)"
  exit 1
fi
