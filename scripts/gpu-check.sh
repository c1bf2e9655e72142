#!/usr/bin/env bash
# The GPU check: msrag's GPU paths on one NVIDIA GPU machine with a CUDA 13
# driver and PyTorch's CUDA 13 libraries (pip's nvidia-* packages) but no Go,
# no internet, no GPU build of FAISS or ONNX Runtime, within 8 minutes.
# docs/gpu.md says what each step shows and what it gave.
#
# Here (development machine, after make setup GPU=1, which puts FAISS 1.15.0's
# GPU libfaiss.so, its CUDA 12 runtime and the CUDA headers in the msrag cache):
#
#   scripts/gpu-check.sh --prepare   # .cache/gpu-check/part-00, part-01, ... (46 MiB each)
#   scripts/gpu-check.sh --dry-run   # the check from what --prepare staged, here
#
# --prepare builds the faiss package's test binary and bin/msrag with the gpu
# build tag against that libfaiss.so, the onnx package's test binary, a
# libcublas.so.12 that forwards FAISS's eight cuBLAS calls to the machine's
# cuBLAS 13 (scripts/gpu-check/cublas12.c), and packs them with the CUDA 13
# build of ONNX Runtime (the onnxruntime-gpu wheel, pinned and sha256-checked),
# all-MiniLM-L6-v2 (fp32, and fp16 when model_fp16.onnx is in the cache) and
# SciFact into one xz archive split into parts. There, with the parts in
# $PARTS (default .cache/gpu-check), from the repository root:
#
#   scripts/gpu-check.sh             # report on stdout and in $OUT/gpu-check/
#
# Each step prints "RESULT name ok|FAILED|not run: why":
#   faiss-tests       the faiss package's tests, built with the gpu tag and
#                     run against the GPU libfaiss.so (no GPU needed)
#   faiss-gpu         TestGPURoundTrip: an index to the GPU, searched, back
#   msrag-gpu-build   that bin/msrag, on the CPU: an eval of SciFact test with
#                     the hash test embedder (no GPU needed)
#   faiss-flat-1m     flat search of 1,000,000 x 384 vectors, 10,000 queries,
#                     on the GPU and on the machine's CPU: the same top 10,
#                     queries/s both sides (TestGPUFlatAgainstCPU)
#   embed-fp32/fp16   TestCUDA, TestPoolCUDA, TestCUDAFP16 (fp16 vectors'
#                     cosine to fp32) and BenchmarkEmbedTokensCUDA(FP16), tokens/s
#   eval-cuda-fp32/fp16  msrag eval --device cuda of SciFact test (windows 64,
#                     128, 254 + full + lexical), the index built and searched
#                     on the GPU: whole-job wall time
#   eval-cpu          the same with --device cpu, and per query nDCG@10 of
#                     every configuration, GPU against CPU
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
parts=${PARTS:-$root/.cache/gpu-check}
stage=$root/.cache/gpu-check.stage
cache=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
model=all-minilm-l6-v2
ort_ver=1.31.1
ort_whl=onnxruntime_gpu-$ort_ver-cp312-cp312-manylinux_2_28_x86_64.whl
ort_sha=05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7
configs='windows,rrf:windows=dense,rrf:windows=lexical,combsum:norm=minmax;windows=all,hybrid,full,oracle'

# gpubuild runs go with the cgo flags of a build against the GPU libfaiss.so,
# those of make build GPU=1 (Makefile, WHEEL_CPPFLAGS): FAISS 1.15.0's headers
# as make setup GPU=1 installed them, CUDA's, FAISS_ENABLE_DD (the library
# was compiled with it, and the headers read it), and an rpath to the lib
# folder beside the binary (an RPATH, which the libraries' own dependencies
# also search).
gpubuild() {
  local g=$cache/gpu
  CGO_CPPFLAGS="-I$g/headers/faiss -I$g/headers/cuda -DFAISS_ENABLE_DD" \
    CGO_LDFLAGS="-L$g/lib -Wl,-rpath-link,$g/lib -Wl,--disable-new-dtags -Wl,-rpath,\$ORIGIN/lib" go "$@"
}

prepare() {
  set -e
  local g=$cache/gpu wheels=$root/.cache/gpu-check.wheel
  for f in lib/libfaiss.so lib/libcudart.so.12 headers/cuda/cublas_v2.h; do
    [[ -e $g/$f ]] || { echo "gpu-check: no $g/$f: run make setup GPU=1 first" >&2; exit 1; }
  done
  scripts/fetch-model.sh "$model" >/dev/null
  [[ -f $wheels/$ort_whl ]] || python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 -d "$wheels" "onnxruntime-gpu==$ort_ver"
  echo "$ort_sha  $wheels/$ort_whl" | sha256sum -c --quiet
  rm -rf "$stage" && mkdir -p "$stage/lib" "$stage/shim" "$stage/ort" "$stage/models" "$stage/data"
  gpubuild test -c -tags gpu -ldflags='-s -w' -o "$stage/faiss.test" ./faiss
  gpubuild build -tags gpu -ldflags='-s -w' -o "$stage/msrag" ./cmd/msrag
  go test -c -ldflags='-s -w' -o "$stage/onnx.test" ./onnx
  # What the binaries link beyond glibc and the C++ runtime: libfaiss.so and its
  # OpenBLAS, OpenMP, Fortran runtime and CUDA 12 runtime.
  for b in "$stage/faiss.test" "$stage/msrag"; do
    LD_LIBRARY_PATH=$g/lib ldd "$b" | awk '/=> \// {print $3}' |
      grep -Ev '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|libcublas|libcublasLt)\.so' | xargs -r cp -L -n -t "$stage/lib/"
  done
  cp -L "$g/lib/libcudart.so.12" "$stage/lib/"
  gcc -O2 -shared -fPIC -Wall -o "$stage/shim/libcublas.so.12" -Wl,-soname,libcublas.so.12 \
    -Wl,--version-script=scripts/gpu-check/cublas12.map scripts/gpu-check/cublas12.c -ldl
  echo 'void msrag_cublaslt12_unused(void) {}' | gcc -shared -fPIC -x c -o "$stage/shim/libcublasLt.so.12" -Wl,-soname,libcublasLt.so.12 -
  unzip -q -j "$wheels/$ort_whl" 'onnxruntime/capi/libonnxruntime.so.*' \
    'onnxruntime/capi/libonnxruntime_providers_cuda.so' 'onnxruntime/capi/libonnxruntime_providers_shared.so' -d "$stage/ort"
  cp -r "$cache/models/$model" "$stage/models/"
  rm -f "$stage/models/$model/.verified" # its file times do not survive the copy: verified by sha256 there
  scripts/fetch-data.sh scifact >/dev/null
  cp -r "$cache/data/scifact" "$stage/data/"
  du -sh "$stage"
  rm -rf "$parts" && mkdir -p "$parts"
  (cd "$stage" && tar cf - .) | xz -T0 -6 | split -b 46M -d - "$parts/part-"
  ls -l "$parts"
  echo "carry .cache/gpu-check/part-*; run there: scripts/gpu-check.sh"
}

# unpack puts the parts' contents in $1, afresh: what an earlier run left there
# may come from other parts.
unpack() {
  compgen -G "$parts/part-*" >/dev/null || { echo "no $parts/part-*: run scripts/gpu-check.sh --prepare and bring its parts" >&2; return 1; }
  rm -rf "$1" && mkdir -p "$1" && cat "$parts"/part-* | xz -d | tar -C "$1" -xf -
}

result() { printf 'RESULT %-16s %s\n' "$1" "$2" | tee -a "$report/summary.txt"; }
step() { printf '\n== %s\n' "$*"; }

# gpu says why there is no GPU to run on, or nothing.
gpu() {
  if ! nvidia-smi -L >/dev/null 2>&1 || [[ ! -e /dev/nvidia0 ]]; then echo "no GPU"
  elif [[ -n $dry ]]; then echo "dry run"
  fi
}

evalrun() { # evalrun NAME DEVICE [FLAGS...]: the eval's summary lines, then its seconds
  local name=$1 dev=$2 s=$SECONDS
  shift 2
  timeout 200 "$w/msrag" eval --dataset "$w/data/scifact" --split test --index "$run/idx-$name" --out "$run/ev-$name" --configs "$configs" \
    --fusion-model transfer --model "$model" --windows 64,128,254 --device "$dev" "$@" >"$report/eval-$name.txt" 2>&1
  local rc=$?
  grep -E '^eval: built|^\| hybrid ' "$report/eval-$name.txt"
  [[ $rc == 0 ]] && cp "$run/ev-$name/results.json" "$report/results-$name.json"
  echo "$((SECONDS - s))"
  return $rc
}

compare() { # compare GPU-RESULTS CPU-RESULTS
  python3 - "$1" "$2" <<'PY'
import json, sys
g, c = (json.load(open(p)) for p in sys.argv[1:])
cpu = {x["name"]: x["results"]["per_query"] for x in c["configs"]}
for x in g["configs"]:
    a, b = x["results"]["per_query"], cpu[x["name"]]
    d = [a[q]["ndcg_cut_10"] - b[q]["ndcg_cut_10"] for q in a]
    print("  %-34s nDCG@10 gpu-cpu %+.4f, queries differing %d of %d" % (x["name"], 100 * sum(d) / len(d), sum(v != 0 for v in d), len(d)))
PY
}

dry=""
case ${1:-} in
--prepare) prepare; exit ;;
--dry-run) dry=1 ;;
"") ;;
*) echo "usage: scripts/gpu-check.sh [--prepare | --dry-run]" >&2; exit 2 ;;
esac
report=${OUT:-/tmp}/gpu-check
mkdir -p "$report" && : >"$report/summary.txt"
exec > >(tee "$report/log.txt") 2>&1
start=$SECONDS
if [[ -n $dry ]]; then
  w=$stage
  [[ -x $w/faiss.test ]] || { echo "gpu-check: nothing staged in $w: run scripts/gpu-check.sh --prepare" >&2; exit 1; }
else
  w=${WORK:-/tmp/msrag-gpu-check}
  unpack "$w" || exit 1
fi
run=$w.run # the indices and evaluations the steps make
rm -rf "$run" && mkdir -p "$run"
echo "unpacked in $((SECONDS - start)) s"

step machine
date -u
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv 2>/dev/null || echo "nvidia-smi: none"
nproc
# pip's nvidia-* packages (PyTorch's CUDA 13 libraries) share the namespace package nvidia.
nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
nvlibs=$(find "${nv:-/nonexistent}" -name 'lib*.so*' -printf '%h\n' 2>/dev/null | sort -u | paste -sd:)
shim=""
[[ -z $(find "${nv:-/nonexistent}" -name 'libcublas.so.12' 2>/dev/null) ]] && shim=$w/shim: # cuBLAS 12 is not there: forward to 13
export LD_LIBRARY_PATH="$shim$w/lib:$w/ort${nvlibs:+:$nvlibs}"
export MSRAG_ORT_LIB=$(ls "$w"/ort/libonnxruntime.so.* | head -1) MSRAG_CACHE=$w MSRAG_CUDA_TEST_MODEL=$model
nogpu=$(gpu)
fp16=""   # why the fp16 embedder steps cannot run
[[ -f $w/models/$model/model_fp16.onnx ]] || fp16="no model_fp16.onnx of $model was staged (msrag model fetch $model --fp16 before --prepare)"
fp16eval=$fp16 # why the fp16 eval cannot
[[ -z $fp16eval ]] && ! "$w/msrag" eval --help 2>/dev/null | grep -q -- '--fp16' && fp16eval="this msrag has no --fp16"

step "faiss package tests, gpu build tag, GPU libfaiss.so"
(cd faiss && timeout 120 "$w/faiss.test" -test.v -test.run . ) >"$report/faiss-tests.txt" 2>&1
rc=$?
grep -E '^(--- FAIL|ok|FAIL|PASS)' "$report/faiss-tests.txt"
[[ $rc == 0 ]] && result faiss-tests "ok ($(grep -c '^--- PASS' "$report/faiss-tests.txt") passed, $(grep -c -- '--- SKIP' "$report/faiss-tests.txt") skipped)" || result faiss-tests FAILED
if [[ -n $nogpu ]]; then
  result faiss-gpu "not run: $nogpu"
else
  (cd faiss && timeout 120 "$w/faiss.test" -test.v -test.run 'TestGPURoundTrip$') >"$report/faiss-gpu.txt" 2>&1 &&
    ! grep -q -- '--- SKIP' "$report/faiss-gpu.txt" && result faiss-gpu ok || result faiss-gpu "FAILED (or skipped: $report/faiss-gpu.txt)"
fi

step "msrag of the gpu build tag on the CPU: eval of SciFact test with the hash test embedder"
s=$SECONDS
timeout 120 "$w/msrag" eval --dataset "$w/data/scifact" --split test --index "$run/idx-hash" --out "$run/ev-hash" \
  --model hash-test-embedder --windows 64 --device cpu --quiet >"$report/msrag-cpu.txt" 2>&1
rc=$?
grep -E '^\| (w64|rrf|hybrid) ' "$report/msrag-cpu.txt"
[[ $rc == 0 ]] && result msrag-gpu-build "ok ($((SECONDS - s)) s)" || result msrag-gpu-build "FAILED ($report/msrag-cpu.txt)"

step "FAISS flat search, 1,000,000 x 384, 10,000 queries: GPU against CPU"
if [[ -n $nogpu ]]; then
  result faiss-flat-1m "not run: $nogpu"
else
  (cd faiss && MSRAG_GPU_FLAT=1000000,384,10000 timeout 240 "$w/faiss.test" -test.v -test.run 'TestGPUFlatAgainstCPU$') >"$report/faiss-flat.txt" 2>&1
  rc=$?
  grep -E 'RESULT-FLAT|flat IP' "$report/faiss-flat.txt"
  flat=$(sed -n 's/^RESULT-FLAT //p' "$report/faiss-flat.txt")
  [[ $rc == 0 && -n $flat ]] && result faiss-flat-1m "ok $flat" || result faiss-flat-1m "FAILED (or skipped: $report/faiss-flat.txt)"
fi

step "embedder on the GPU, fp32 and fp16"
for prec in fp32 fp16; do
  if [[ -n $nogpu ]]; then result embed-$prec "not run: $nogpu"; continue; fi
  if [[ $prec == fp16 && -n $fp16 ]]; then result embed-fp16 "not run: $fp16"; continue; fi
  tests='^(TestCUDA|TestPoolCUDA)$' bench='EmbedTokensCUDA$'
  [[ $prec == fp16 ]] && tests='^TestCUDAFP16$' bench='EmbedTokensCUDAFP16$'
  (cd onnx && timeout 120 "$w/onnx.test" -test.v -test.run "$tests" &&
    timeout 150 "$w/onnx.test" -test.run XXX -test.bench "$bench" -test.benchtime 20x -test.count 3) >"$report/embed-$prec.txt" 2>&1
  rc=$?
  grep -E '^(--- |Benchmark)|cosine' "$report/embed-$prec.txt"
  rates=$(grep '^Benchmark' "$report/embed-$prec.txt" | awk '{for (i = 1; i < NF; i++) if ($(i+1) == "tokens/s") printf "%s%.0f", (n++ ? " " : ""), $i}')
  [[ $rc == 0 ]] && ! grep -q -- '--- SKIP' "$report/embed-$prec.txt" && result embed-$prec "ok tokens/s: $rates" || result embed-$prec "FAILED (or skipped: $report/embed-$prec.txt)"
done

step "msrag eval --device cuda of SciFact test, FAISS on the GPU"
for prec in fp32 fp16; do
  if [[ -n $nogpu ]]; then result eval-cuda-$prec "not run: $nogpu"; continue; fi
  if [[ $prec == fp16 && -n $fp16eval ]]; then result eval-cuda-fp16 "not run: $fp16eval"; continue; fi
  flags=()
  [[ $prec == fp16 ]] && flags=(--fp16)
  if out=$(evalrun cuda-$prec cuda "${flags[@]}"); then
    echo "$out"
    result eval-cuda-$prec "ok whole job $(tail -1 <<<"$out") s"
  else
    echo "$out"
    result eval-cuda-$prec "FAILED ($report/eval-cuda-$prec.txt)"
  fi
done

step "msrag eval --device cpu, and per query nDCG@10 against the GPU runs"
if [[ ! -f $report/results-cuda-fp32.json ]]; then
  result eval-cpu "not run: no GPU run to compare with${nogpu:+ ($nogpu)}"
elif ((SECONDS - start > 280)); then
  result eval-cpu "not run: $((SECONDS - start)) s gone of the 8 minutes, and it takes about 160 s on 16 cores"
elif out=$(evalrun cpu cpu); then
  echo "$out"
  result eval-cpu "ok whole job $(tail -1 <<<"$out") s"
  for prec in fp32 fp16; do
    [[ -f $report/results-cuda-$prec.json ]] && { echo "GPU $prec against CPU fp32:"; compare "$report/results-cuda-$prec.json" "$report/results-cpu.json"; }
  done | tee -a "$report/summary.txt"
else
  result eval-cpu "FAILED ($report/eval-cpu.txt)"
fi
echo
echo "gpu-check: $((SECONDS - start)) s; report in $report"
