#!/usr/bin/env bash
# The GPU build proved on a machine without a GPU (CI runs it after make check-gpu-build):
#
#   1. make build GPU=1, make build and, where Debian's libfaiss-dev is installed, make build
#      FAISS=debian, side by side in WORK/gpu, WORK/wheel and WORK/debian: the tag gpu binary
#      linked to FAISS 1.15.0's GPU library from the faiss-gpu wheel (make setup GPU=1; the
#      wheels are kept in msrag's cache, so that a rerun downloads nothing), the default one
#      linked to the faiss-cpu 1.15.0 wheel's library, the Debian one to Debian's FAISS 1.7.3;
#   2. the GPU binary's libraries: every one found, those of the wheels in WORK/gpu/lib (its
#      rpath), one OpenBLAS and one OpenMP runtime;
#   3. go test -tags gpu ./faiss linked to the GPU library (the GPU tests skip: no device);
#   4. a SciFact subset (the judged test documents and 200 others) indexed in 2 shards
#      (--shard i/2) with the hash test embedder (so that no ONNX Runtime version enters) by
#      the Debian build where there is one (FAISS 1.7.3 writes, 1.15.0 reads), else the
#      default, then searched over both shards by each binary: every build's TREC run equals
#      the indexing build's byte for byte: FAISS finds the candidates, and every build scores
#      them with the binding's own fixed-order kernel (faiss/shim.cpp, pair_score), not
#      FAISS's, whose rounding differs between releases and SIMD levels.
#
#   scripts/check-gpu-build-run.sh          (WORK: .cache/gpu-build-run, or $MSRAG_GPU_RUN_WORK)
#
# Prints PASS/FAIL per check and exits 1 when one failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
work=${MSRAG_GPU_RUN_WORK:-.cache/gpu-build-run}
mkdir -p "$work"
work=$(cd "$work" && pwd)
pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
now() { date +%s; }

# ---- 1. the builds ----------------------------------------------------------------------
builds=(gpu wheel)
if dpkg-query -W -f='${Status}' libfaiss-dev 2>/dev/null | grep -q "install ok installed"; then
  builds+=(debian)
else
  echo "check-gpu-build-run: Debian's libfaiss-dev is not installed: no FAISS=debian build"
fi
t0=$(now)
times=""
for b in "${builds[@]}"; do
  case $b in
    gpu) vars=(GPU=1) ;;
    wheel) vars=() ;;
    debian) vars=(FAISS=debian) ;;
  esac
  t=$(now)
  make --no-print-directory build "${vars[@]}" BIN="$work/$b" >"$work/build-$b.log" 2>&1 ||
    { tail -30 "$work/build-$b.log"; bad "make build ${vars[*]}"; exit 1; }
  times+=" $b $(($(now) - t)) s"
done
ok "make build GPU=1, the default${builds[2]:+ and FAISS=debian} (setup included):$times"

# ---- 2. the GPU binary's libraries -----------------------------------------------------
ldd "$work/gpu/msrag" >"$work/ldd.txt"
blas=$(grep -c 'libopenblas' "$work/ldd.txt" || true)
gomp=$(grep -c 'libgomp' "$work/ldd.txt" || true)
if grep -q 'not found' "$work/ldd.txt"; then
  bad "ldd: $(grep 'not found' "$work/ldd.txt" | tr -s ' \t' ' ')"
elif [[ $blas != 1 || $gomp != 1 ]]; then
  bad "ldd: $blas OpenBLAS and $gomp libgomp libraries, want one of each"; cat "$work/ldd.txt"
else
  elsewhere=""
  for l in libfaiss.so libopenblas libgomp libcudart.so.12 libcublas.so.12 libcublasLt.so.12; do
    grep "$l" "$work/ldd.txt" | grep -q "=> $work/gpu/lib/" || elsewhere+=" $l"
  done
  if [[ -n $elsewhere ]]; then
    bad "ldd:$elsewhere not taken from $work/gpu/lib"
  else
    ok "ldd: libfaiss, OpenBLAS, libgomp, cudart and cuBLAS from $work/gpu/lib (rpath), one OpenBLAS, one libgomp"
  fi
fi

# ---- 3. the faiss package with -tags gpu -----------------------------------------------
lib="$MSRAG_CACHE/gpu/lib" hdr="$MSRAG_CACHE/gpu/headers"
if CGO_CPPFLAGS="-I$hdr/faiss -I$hdr/cuda -DFAISS_ENABLE_DD" \
  CGO_LDFLAGS="-L$lib -Wl,-rpath-link,$lib -Wl,--disable-new-dtags -Wl,-rpath,$lib" \
  go test -count=1 -tags gpu ./faiss >"$work/go-test.log" 2>&1; then
  ok "go test -tags gpu ./faiss against faiss-gpu 1.15.0 ($(tail -1 "$work/go-test.log"))"
else
  bad "go test -tags gpu ./faiss"; tail -30 "$work/go-test.log"
fi

# ---- 4. a sharded SciFact subset: the same run through either library --------------------
sub="$work/scifact-sub"
scripts/subset-dataset.sh "$MSRAG_CACHE/data/scifact" "$sub" test 200 >/dev/null
args=(--model hash-test-embedder --windows 100,200,500 --block-lines 100 --quiet)
rm -rf "$work/shard-0" "$work/shard-1"
ref=${builds[-1]}
for i in 0 1; do
  "$work/$ref/msrag" index --corpus "$sub" --out "$work/shard-$i" --shard "$i/2" "${args[@]}"
done
for b in "${builds[@]}"; do
  "$work/$b/msrag" search --index "$work/shard-0,$work/shard-1" --queries "$sub" \
    --k 100 --format trec --quiet --out "$work/run.$b.trec"
done
lines=$(wc -l <"$work/run.$ref.trec")
for b in "${builds[@]}"; do
  [[ $b == "$ref" ]] && continue
  if [[ -s $work/run.$ref.trec ]] && cmp -s "$work/run.$ref.trec" "$work/run.$b.trec"; then
    ok "sharded SciFact subset indexed by the $ref build: the $b build's TREC run equals the $ref build's byte for byte ($lines lines)"
  else
    bad "sharded SciFact subset indexed by the $ref build: the $b build's TREC run differs from the $ref build's"
    diff "$work/run.$ref.trec" "$work/run.$b.trec" | head -20
  fi
done

echo "check-gpu-build-run: $pass passed, $fail failed ($(($(now) - t0)) s)"
((fail == 0))
