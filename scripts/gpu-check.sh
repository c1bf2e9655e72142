#!/usr/bin/env bash
# What of msrag's GPU path can be checked on one NVIDIA GPU machine that has a
# CUDA driver and PyTorch but no internet, no Go and no GPU build of FAISS or ONNX
# Runtime, in under 8 minutes. docs/gpu.md says what each step shows.
#
# Here (development machine), once, to build what travels to the GPU machine:
#
#   scripts/gpu-check.sh --prepare      # .cache/gpu-check/, .cache/gpu-headers/ and,
#                                       # packed from both, .cache/gpu-check.tar.xz
#
# There, from the repository root with .cache/gpu-check.tar.xz carried along (about
# 25 MB: the two folders are about 95 MB unpacked, more than a GPU machine's copy of
# the working tree may take):
#
#   scripts/gpu-check.sh                # unpacks the archive when the folders are
#                                       # missing; report on stdout and in $OUT/gpu-check.txt
#
# Steps (each bounded by a timeout; a step that cannot run says why and the
# check goes on):
#   1. the machine: GPUs, driver, CUDA headers, PyTorch and its CUDA libraries;
#   2. the GPU shim faiss/gpu.cpp compiled (g++ -fsyntax-only, the C++ half of
#      `go build -tags gpu`) against FAISS 1.7.3's GPU headers and the machine's
#      own CUDA headers (the carried CUDA 12.9 headers where it has none);
#   3. go vet -tags gpu ./... where the machine has Go;
#   4. the ONNX Runtime CUDA provider: the onnx package's CUDA tests (TestCUDA,
#      TestPoolCUDA, built here as .cache/gpu-check/onnx.test) with a GPU build of
#      ONNX Runtime found on the machine (MSRAG_ORT_LIB, or an onnxruntime-gpu
#      Python package), else reported as not run;
#   5. FAISS on the GPU: reported as not run (FAISS's GPU kernels take far longer
#      than this check to compile, and no GPU build of libfaiss can be carried);
#   6. the GPU's measured matrix-multiply rate (PyTorch, fp32/tf32/fp16): the
#      physical limit the "GPU" section of docs/performance.md scales from.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
prep="$root/.cache/gpu-check"
headers="$root/.cache/gpu-headers"
archive="$root/.cache/gpu-check.tar.xz"
# The model the CUDA tests run: small enough to carry (the fp32 models are 90-130 MB).
test_model=${MSRAG_CUDA_TEST_MODEL:-all-minilm-l6-v2-int8}

if [[ "${1:-}" == "--prepare" ]]; then
  set -e
  scripts/fetch-gpu-headers.sh
  scripts/fetch-model.sh "$test_model" >/dev/null
  rm -rf "$prep.tmp" && mkdir -p "$prep.tmp/models"
  # Stripped: the symbols add a third to the binary and no step reads them.
  go test -c -ldflags='-s -w' -o "$prep.tmp/onnx.test" ./onnx
  cp -r "${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/models/$test_model" "$prep.tmp/models/"
  echo "$test_model" >"$prep.tmp/test-model"
  rm -rf "$prep" && mv "$prep.tmp" "$prep"
  tar -C "$root/.cache" -cf - gpu-check gpu-headers | xz -T0 -6 >"$archive.tmp"
  mv "$archive.tmp" "$archive"
  du -sh "$prep" "$headers" "$archive"
  echo "carry: .cache/gpu-check.tar.xz; run: scripts/gpu-check.sh"
  exit 0
fi

if [[ -f "$archive" && ( ! -d "$prep" || ! -d "$headers" ) ]]; then
  # Python's tarfile where the machine has no xz.
  if command -v xz >/dev/null; then
    tar -C "$root/.cache" -xJf "$archive"
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$archive" "$root/.cache"
  fi || echo "could not unpack $archive"
fi

out=${OUT:-/tmp}/gpu-check.txt
exec > >(tee "$out") 2>&1
[[ -f "$prep/test-model" ]] && test_model=$(cat "$prep/test-model")
step() { printf '\n== %s\n' "$*"; }
result() { printf 'RESULT %-28s %s\n' "$1" "$2"; }

step "1. machine"
date -u
uname -r
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi failed"
cuda_inc=""
for d in "${CUDA_HOME:-/nonexistent}/include" /usr/local/cuda/include /usr/local/cuda-*/include /usr/include; do
  if [[ -f "$d/cuda_runtime.h" ]]; then cuda_inc=$d; break; fi
done
py=$(command -v python3 || true)
pyinfo=""
if [[ -n "$py" ]]; then
  pyinfo=$(timeout 60 "$py" - <<'EOF' 2>&1
import glob, os, site
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
          "devices", torch.cuda.device_count())
except Exception as e:
    print("torch: not importable:", e)
try:
    import onnxruntime
    print("onnxruntime", onnxruntime.__version__, "providers", onnxruntime.get_available_providers())
except Exception as e:
    print("onnxruntime: not importable:", e)
for sp in site.getsitepackages():
    for h in glob.glob(os.path.join(sp, "nvidia", "**", "include", "cuda_runtime.h"), recursive=True):
        print("pip-cuda-include", os.path.dirname(h))
    for lib in glob.glob(os.path.join(sp, "onnxruntime", "capi", "libonnxruntime_providers_cuda.so")):
        print("ort-gpu", os.path.dirname(lib))
EOF
)
  echo "$pyinfo"
fi
if [[ -z "$cuda_inc" ]]; then
  cuda_inc=$(sed -n 's/^pip-cuda-include //p' <<<"$pyinfo" | head -1)
fi
[[ -n "$cuda_inc" ]] && echo "CUDA headers of the machine: $cuda_inc" || echo "CUDA headers of the machine: none found"

step "2. GPU shim against FAISS GPU headers"
if [[ ! -d "$headers/faiss" ]]; then
  result compile-gpu-shim "not run: .cache/gpu-headers not carried (scripts/gpu-check.sh --prepare)"
else
  for inc in "$cuda_inc" "$headers/cuda"; do
    [[ -z "$inc" ]] && continue
    # Headers the machine lacks (cuBLAS, CCCL's nv/target) come from the carried set.
    if timeout 120 g++ -std=c++17 -fsyntax-only -Wall -DMSRAG_FAISS_GPU -Ifaiss -I"$headers/faiss" \
      -I"$inc" $(sed -n 's/^pip-cuda-include /-I/p' <<<"$pyinfo") -I"$headers/cuda" faiss/gpu.cpp; then
      result compile-gpu-shim "ok (FAISS 1.7.3 headers, CUDA headers $inc)"
    else
      result compile-gpu-shim "FAILED with CUDA headers $inc"
    fi
  done
fi

step "3. go vet -tags gpu"
if command -v go >/dev/null; then
  if CGO_CPPFLAGS="-I$headers/faiss -I${cuda_inc:-$headers/cuda} -I$headers/cuda" timeout 300 go vet -tags gpu ./...; then
    result go-vet-gpu ok
  else
    result go-vet-gpu FAILED
  fi
else
  result go-vet-gpu "not run: no Go on this machine (done on every CI run: make check-gpu-build)"
fi

step "4. ONNX Runtime CUDA provider"
ortlib=${MSRAG_ORT_LIB:-}
if [[ -z "$ortlib" ]]; then
  d=$(sed -n 's/^ort-gpu //p' <<<"$pyinfo" | head -1)
  [[ -n "$d" ]] && ortlib=$(ls "$d"/libonnxruntime.so* 2>/dev/null | head -1)
fi
if [[ ! -x "$prep/onnx.test" ]]; then
  result ort-cuda "not run: .cache/gpu-check not carried (scripts/gpu-check.sh --prepare)"
elif [[ -z "$ortlib" ]]; then
  result ort-cuda "not run: no GPU build of ONNX Runtime on this machine (MSRAG_ORT_LIB unset, no onnxruntime-gpu package)"
else
  echo "ONNX Runtime library: $ortlib; model $test_model"
  if (cd onnx && MSRAG_ORT_LIB="$ortlib" MSRAG_CACHE="$prep" MSRAG_CUDA_TEST_MODEL="$test_model" \
    timeout 240 "$prep/onnx.test" -test.run 'CUDA' -test.v); then
    result ort-cuda "ok (TestCUDA, TestPoolCUDA; see above whether they ran or skipped)"
  else
    result ort-cuda FAILED
  fi
fi

step "5. FAISS on the GPU"
result faiss-gpu "not run: needs a GPU build of libfaiss (Dockerfile.cuda builds one; about an hour of nvcc)"

step "6. matrix-multiply rate of the GPU (PyTorch)"
if [[ -n "$py" ]]; then
  timeout 120 "$py" - <<'EOF' || result gemm "FAILED"
import time
try:
    import torch
except Exception as e:
    print("RESULT gemm                         not run: no torch:", e); raise SystemExit(0)
if not torch.cuda.is_available():
    print("RESULT gemm                         not run: torch sees no GPU"); raise SystemExit(0)
n = 8192
for name, dt, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True), ("fp16", torch.float16, False)):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(n, n, device="cuda", dtype=dt); b = torch.randn(n, n, device="cuda", dtype=dt)
    for _ in range(3): a @ b
    torch.cuda.synchronize(); t = time.time(); reps = 20
    for _ in range(reps): a @ b
    torch.cuda.synchronize(); s = time.time() - t
    print("RESULT gemm-%-23s %.1f TFLOP/s (%d^3, %d reps)" % (name, 2 * n**3 * reps / s / 1e12, n, reps))
EOF
else
  result gemm "not run: no python3"
fi
echo
echo "report: $out"
