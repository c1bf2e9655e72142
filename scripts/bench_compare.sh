#!/usr/bin/env bash
# Runs Go benchmarks of an older commit and of the working tree side by side,
# in turns (old, new, old, new, ...), and prints the median of each
# sub-benchmark's ns/op and of every custom metric for both, and new/old.
#
#   scripts/bench_compare.sh OLDREV 'BenchmarkPipeline|BenchmarkSearch' [BENCHTIME] [ROUNDS] [PKG]
#
# OLDREV is checked out into a temporary git worktree (removed afterwards), and
# so is $NEW when set (otherwise the new side is this working tree);
# both trees use this checkout's .cache (models, tokenizers), the data sets of msrag's cache
# (scripts/fetch-data.sh) and FAISS as make build links it. Defaults: BENCHTIME 1x, ROUNDS 5,
# PKG . (the root package).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
old=${1:?usage: scripts/bench_compare.sh OLDREV REGEX [BENCHTIME] [ROUNDS] [PKG]}
re=${2:?usage: scripts/bench_compare.sh OLDREV REGEX [BENCHTIME] [ROUNDS] [PKG]}
benchtime=${3:-1x}
rounds=${4:-5}
pkg=${5:-.}
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
eval "$(make -s --no-print-directory go-env)"
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/old" "$old"
ln -s "$root/.cache" "$work/old/.cache"
newdir=$root
if [[ -n ${NEW:-} ]]; then
  git worktree add -q --detach "$work/new" "$NEW"
  ln -s "$root/.cache" "$work/new/.cache"
  newdir=$work/new
  trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; git worktree remove --force "$work/new" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fi
for r in $(seq "$rounds"); do
  for side in old new; do
    dir=$newdir
    [[ $side == old ]] && dir=$work/old
    (cd "$dir" && go test "$pkg" -run '^$' -bench "$re" -benchtime "$benchtime" -count 1) \
      | grep '^Benchmark' | sed "s/^/$side /" >>"$work/results.txt"
    echo "round $r $side done" >&2
  done
done
python3 - "$work/results.txt" <<'PY'
import collections, statistics, sys
vals = collections.defaultdict(list)  # (bench, unit, side) -> values
for line in open(sys.argv[1]):
    f = line.split()
    side, name = f[0], f[1].rsplit("-", 1)[0]
    for v, unit in zip(f[3::2], f[4::2]):
        vals[(name, unit, side)].append(float(v))
keys = sorted({(n, u) for n, u, _ in vals})
print("| benchmark | unit | old (median) | new (median) | new/old |")
print("|---|---|---:|---:|---:|")
for n, u in keys:
    o, w = vals.get((n, u, "old")), vals.get((n, u, "new"))
    if not o or not w:
        continue
    mo, mw = statistics.median(o), statistics.median(w)
    print(f"| {n} | {u} | {mo:.4g} | {mw:.4g} | {mw / mo if mo else float('nan'):.3f} |")
PY
