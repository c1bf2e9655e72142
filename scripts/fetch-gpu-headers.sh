#!/usr/bin/env bash
# Fetches the headers that compile msrag's GPU code (build tag gpu) on a machine
# without CUDA or a GPU build of FAISS, into .cache/gpu-headers/:
#
#   faiss/     FAISS 1.7.3's headers, GPU ones included, from Debian's faiss
#              source package (the release libfaiss-dev is built from; Debian's
#              binary packages leave the GPU headers out). MIT licence.
#   cuda/      CUDA 12.9 runtime, cuBLAS, nvcc (crt) and CCCL headers, from
#              NVIDIA's CUDA wheels on PyPI (NVIDIA CUDA EULA; headers only).
#
#   scripts/fetch-gpu-headers.sh          fetch what is missing (idempotent)
#   scripts/fetch-gpu-headers.sh --check  print present/missing; exit 1 if missing
#
# What compiles against them: `make check-gpu-build` (go vet -tags gpu ./faiss,
# which runs the C++ compiler over faiss/gpu.cpp) and scripts/gpu-check.sh on a
# GPU machine. Linking needs a real GPU build of FAISS and CUDA's libraries.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dst="${MSRAG_CACHE:-$root/.cache}/gpu-headers"
pip=${PIP:-pip3}
command -v "$pip" >/dev/null || pip="python3 -m pip"

faiss_ver=1.7.3
faiss_sha=3e4fac26d8c9e9008ecea4ae5fc414c658998fce4ba75835058b1a71d3516002 # faiss_1.7.3.orig.tar.gz
# PyPI requirement | wheel file | sha256
wheels=(
  "nvidia-cuda-runtime-cu12==12.9.79|nvidia_cuda_runtime_cu12-12.9.79-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl|25bba2dfb01d48a9b59ca474a1ac43c6ebf7011f1b0b8cc44f54eb6ac48a96c3"
  "nvidia-cublas-cu12==12.9.3.13|nvidia_cublas_cu12-12.9.3.13-py3-none-manylinux_2_27_x86_64.whl|d7d51055f161b317c7105ddaae90e71eda059026074ffef93cf7cde2886bfe72"
  "nvidia-cuda-nvcc-cu12==12.9.86|nvidia_cuda_nvcc_cu12-12.9.86-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl|5d6a0d32fdc7ea39917c20065614ae93add6f577d840233237ff08e9a38f58f0"
  "nvidia-cuda-cccl-cu12==12.9.27|nvidia_cuda_cccl_cu12-12.9.27-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl|37869e17ce2e1ecec6eddf1927cca0f8c34e64fd848d40453df559091e2d7117"
)

if [[ -f "$dst/.complete" ]]; then
  printf '%-12s %-8s %s\n' gpu-headers present "$dst"
  exit 0
fi
if [[ "${1:-}" == "--check" ]]; then
  printf '%-12s %-8s %s\n' gpu-headers missing "$dst"
  exit 1
fi

mkdir -p "$(dirname "$dst")"
tmp=$(mktemp -d "$(dirname "$dst")/.tmp-gpu-headers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/out/cuda" "$tmp/apt/lists/partial" "$tmp/apt/sources.list.d"

# FAISS: the system's own Debian sources, as deb-src entries, in a private apt
# state directory (the system's apt configuration is not touched).
for f in /etc/apt/sources.list.d/*.sources; do
  [[ -f "$f" ]] && sed 's/^Types: deb$/Types: deb-src/' "$f" >"$tmp/apt/sources.list.d/$(basename "$f")"
done
if [[ -f /etc/apt/sources.list ]]; then
  sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >"$tmp/apt/sources.list"
else
  : >"$tmp/apt/sources.list"
fi
aptopts=(-o Dir::Etc::SourceList="$tmp/apt/sources.list" -o Dir::Etc::SourceParts="$tmp/apt/sources.list.d"
  -o Dir::State::Lists="$tmp/apt/lists" -o APT::Sandbox::User=root)
apt-get "${aptopts[@]}" update -qq
(cd "$tmp" && apt-get "${aptopts[@]}" source --download-only -qq "faiss=$faiss_ver-2")
if ! echo "$faiss_sha  $tmp/faiss_$faiss_ver.orig.tar.gz" | sha256sum -c --status; then
  echo "fetch-gpu-headers: faiss_$faiss_ver.orig.tar.gz: sha256 differs from $faiss_sha" >&2
  exit 1
fi
tar xzf "$tmp/faiss_$faiss_ver.orig.tar.gz" -C "$tmp" "faiss-$faiss_ver/faiss"
(cd "$tmp/faiss-$faiss_ver" && find faiss \( -name '*.h' -o -name '*.cuh' \) -exec install -D -m 644 {} "$tmp/out/faiss/{}" \;)

# CUDA headers from the wheels.
for w in "${wheels[@]}"; do
  IFS='|' read -r req file sha <<<"$w"
  $pip download --quiet --no-deps --dest "$tmp/whl" "$req"
  if ! echo "$sha  $tmp/whl/$file" | sha256sum -c --status; then
    echo "fetch-gpu-headers: $file: sha256 differs from $sha" >&2
    exit 1
  fi
  unzip -q -o "$tmp/whl/$file" 'nvidia/*/include/*' -d "$tmp/wheel"
  rm -f "$tmp/whl/$file"
done
for d in "$tmp"/wheel/nvidia/*/include; do
  cp -r "$d/." "$tmp/out/cuda/"
done
touch "$tmp/out/.complete"
rm -rf "$dst"
mv "$tmp/out" "$dst"
printf '%-12s %-8s %s\n' gpu-headers fetched "$dst"
