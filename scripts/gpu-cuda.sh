#!/usr/bin/env bash
# msrag's embedder on a GPU through ONNX Runtime's CUDA provider, on a machine
# with an NVIDIA driver for CUDA 13 and PyTorch's CUDA 13 libraries (cuBLAS,
# cuRAND, cuDNN, ... as pip's nvidia-* packages) but no Go, no GPU build of
# ONNX Runtime and no internet. docs/gpu.md says what it showed.
#
# Here (development machine), to build what travels:
#
#   scripts/gpu-cuda.sh --prepare     # .cache/gpu-cuda/part-00, part-01, ...
#
# It packs the CUDA 13 build of ONNX Runtime (the onnxruntime-gpu wheel, pinned
# and sha256-checked), the fp32 all-minilm-l6-v2 model, bin/msrag with the
# shared libraries it links beyond glibc, the onnx package's test binary and
# SciFact (../shared/data/scifact) into one xz archive, split into parts of
# 46 MiB for machines that take files in limited pieces. There, with every part
# in $PARTS (default .cache/gpu-cuda), from the repository root (SciFact is
# copied to ../shared/data/scifact there when missing):
#
#   scripts/gpu-cuda.sh               # report in $OUT/gpu-cuda/ (OUT default /tmp)
#   CPU_TOO=1 scripts/gpu-cuda.sh     # also the same eval on the CPU, and the comparison
#
# Steps: the onnx package's CUDA tests (TestCUDA, TestPoolCUDA: vectors against
# the CPU's), BenchmarkEmbedTokensCUDA (3 runs), then `msrag eval` of SciFact's
# test split with windows 64, 128, 254 (+ full, + lexical) and --device cuda,
# building the index on the GPU; with CPU_TOO=1 the same eval with --device cpu
# and, per configuration, the queries whose nDCG@10 differ between the two.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
parts=${PARTS:-$root/.cache/gpu-cuda}
model=all-minilm-l6-v2
ort_ver=1.31.1
ort_whl=onnxruntime_gpu-$ort_ver-cp312-cp312-manylinux_2_28_x86_64.whl
ort_sha=05d548956197b9d01f59b625de740e0d6be3593f874e241a12dc0362650ecdf7
configs='windows,rrf:windows=dense,rrf:windows=lexical,combsum:norm=minmax;windows=all,hybrid,full,oracle'

prepare() {
  set -e
  local stage=$root/.cache/gpu-cuda.stage wheels=$root/.cache/gpu-cuda.wheel
  make build >/dev/null
  scripts/fetch-model.sh "$model" >/dev/null
  [[ -f $wheels/$ort_whl ]] || python3 -m pip download -q --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 -d "$wheels" "onnxruntime-gpu==$ort_ver"
  echo "$ort_sha  $wheels/$ort_whl" | sha256sum -c --quiet
  rm -rf "$stage" && mkdir -p "$stage/ort" "$stage/lib" "$stage/models" "$stage/data"
  unzip -q -j "$wheels/$ort_whl" 'onnxruntime/capi/libonnxruntime.so.*' \
    'onnxruntime/capi/libonnxruntime_providers_cuda.so' 'onnxruntime/capi/libonnxruntime_providers_shared.so' -d "$stage/ort"
  cp -r "${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/models/$model" "$stage/models/"
  rm -f "$stage/models/$model/.verified" # its file times do not survive the copy: verified by sha256 there
  cp bin/msrag "$stage/"
  # What bin/msrag links beyond glibc and the C++ runtime (the machine has newer ones).
  ldd bin/msrag | awk '/=> \// {print $3}' | grep -Ev '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s)\.so' |
    xargs -r cp -L -t "$stage/lib/"
  go test -c -ldflags='-s -w' -o "$stage/onnx.test" ./onnx
  cp -r ../shared/data/scifact "$stage/data/"
  rm -rf "$parts" && mkdir -p "$parts"
  (cd "$stage" && tar cf - .) | xz -T0 -6 | split -b 46M -d - "$parts/part-"
  rm -rf "$stage"
  ls -l "$parts"
}

# unpack puts the parts' contents in $1, afresh: what an earlier run left
# there may come from other parts.
unpack() {
  compgen -G "$parts/part-*" >/dev/null || { echo "gpu-cuda: no $parts/part-*: run scripts/gpu-cuda.sh --prepare and bring its parts" >&2; return 1; }
  rm -rf "$1" && mkdir -p "$1" && cat "$parts"/part-* | xz -d | tar -C "$1" -xf -
}

evalrun() { # evalrun DIR DEVICE
  local s=$SECONDS
  "$w/msrag" eval --dataset "$w/data/scifact" --split test --index "$w/idx-$2" --out "$1" \
    --configs "$configs" --fusion-model transfer --model "$model" --windows 64,128,254 --device "$2" \
    >"$report/eval-$2.txt" 2>&1
  echo "eval --device $2: rc $?, $((SECONDS - s)) s" | tee -a "$report/summary.txt"
  grep -E '^eval: built|^\| hybrid ' "$report/eval-$2.txt" | tee -a "$report/summary.txt"
  cp "$1/results.json" "$report/results-$2.json"
}

compare() {
  python3 - "$report/results-cuda.json" "$report/results-cpu.json" <<'EOF' | tee -a "$report/summary.txt"
import json, sys
g, c = (json.load(open(p)) for p in sys.argv[1:])
cpu = {x["name"]: x["results"]["per_query"] for x in c["configs"]}
for x in g["configs"]:
    a, b = x["results"]["per_query"], cpu[x["name"]]
    d = [a[q]["ndcg_cut_10"] - b[q]["ndcg_cut_10"] for q in a]
    print("%-34s nDCG@10 gpu-cpu %+.4f, queries differing %d of %d" % (x["name"], 100 * sum(d) / len(d), sum(v != 0 for v in d), len(d)))
EOF
}

if [[ ${1:-} == --prepare ]]; then prepare; exit; fi
w=${WORK:-/tmp/msrag-gpu-cuda}
report=${OUT:-/tmp}/gpu-cuda
mkdir -p "$report"
unpack "$w" || { echo "gpu-cuda: could not unpack $parts/part-* into $w" >&2; exit 1; }
# pip's nvidia-* packages share the namespace package nvidia; their libraries are in its lib folders.
nv=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
export LD_LIBRARY_PATH="$w/lib:$w/ort:$(find "${nv:-/nonexistent}" -name 'lib*.so*' -printf '%h\n' 2>/dev/null | sort -u | paste -sd:)"
export MSRAG_ORT_LIB=$(ls "$w"/ort/libonnxruntime.so.* | head -1) MSRAG_CACHE=$w MSRAG_CUDA_TEST_MODEL=$model
mkdir -p ../shared/data && [[ -d ../shared/data/scifact ]] || cp -r "$w/data/scifact" ../shared/data/
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$report/summary.txt"
(cd onnx && "$w/onnx.test" -test.run CUDA -test.v) >"$report/tests.txt" 2>&1
echo "onnx CUDA tests: rc $?; $(grep -E '^--- ' "$report/tests.txt" | tr '\n' ' ')" | tee -a "$report/summary.txt"
(cd onnx && "$w/onnx.test" -test.run XXX -test.bench EmbedTokensCUDA -test.benchtime 20x -test.count 3) >"$report/bench.txt" 2>&1
grep '^Benchmark' "$report/bench.txt" | tee -a "$report/summary.txt"
evalrun "$w/ev-cuda" cuda
if [[ -n ${CPU_TOO:-} ]]; then
  evalrun "$w/ev-cpu" cpu
  compare
fi
