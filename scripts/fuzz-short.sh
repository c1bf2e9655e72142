#!/usr/bin/env bash
# Runs every fuzz target of the module for a bounded time each (default 10 s;
# FUZZTIME=30s scripts/fuzz-short.sh for longer), one target at a time, as
# go test -fuzz requires. A failure leaves its input under the package's
# testdata/fuzz/NAME, which go test then replays as a regression case.
#
#   scripts/fuzz-short.sh            every target
#   scripts/fuzz-short.sh ./suite    the targets of some packages
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
pkgs=("$@")
if ((${#pkgs[@]} == 0)); then
  mapfile -t pkgs < <(go list ./...)
fi
n=0
for pkg in "${pkgs[@]}"; do
  while read -r target; do
    [[ $target == Fuzz* ]] || continue
    echo "fuzz: $pkg $target ($fuzztime)"
    if ! out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
      echo "$out"
      echo "fuzz: $pkg $target failed" >&2
      exit 1
    fi
    n=$((n + 1))
  done < <(go test -list '^Fuzz' "$pkg" 2>/dev/null)
done
echo "fuzz: $n targets, $fuzztime each: 0 failed"
