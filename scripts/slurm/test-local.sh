#!/usr/bin/env bash
# End-to-end check of the Slurm scripts on a one-node local cluster, with a fake msrag
# (scripts/slurm/fake-msrag.sh), so that scheduling is tested without models or indices.
#
#   scripts/slurm/test-local.sh [--keep] [--limit S]
#
# Starts the cluster (scripts/slurm/local-cluster.sh start; needs root), then checks:
# idempotent start, a plain job array with an afterok dependent job, a 3-shard build through
# submit-index.sh --wait, argument pass-through, failure of one shard (non-zero exit, check job
# cancelled), --resume, --timeout, check-shards on a broken output, and with MSRAG_TEST_BIN set
# a real 3-shard msrag build (hash test embedder; needs its tokenizer in the cache). Prints
# "slurm: N passed, M failed" and the measured scheduler overhead; exits 1 on any failure.
# The whole run, except installing the packages on a first run, is bounded by --limit seconds
# (default 120). A cluster this script started is
# stopped at the end unless --keep is given; one that was already running is left running.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
keep=0 limit=120
while (($#)); do
  case $1 in
    --keep) keep=1; shift ;;
    --limit) limit=$2; shift 2 ;;
    --limit=*) limit=${1#*=}; shift ;;
    *) echo "usage: $0 [--keep] [--limit S]" >&2; exit 2 ;;
  esac
done

if [[ -z ${MSRAG_SLURM_TEST_INNER:-} ]]; then
  # Installing packages (first run only) is not part of the time limit.
  "$here/local-cluster.sh" install || { echo "slurm: FAILED: could not install slurm-wlm and munge"; exit 1; }
  MSRAG_SLURM_TEST_INNER=1 timeout -k 5 "$limit" "$0" "$@"
  rc=$?
  if ((rc == 124 || rc == 137)); then
    echo "slurm: FAILED: timed out after ${limit}s"
    squeue 2>/dev/null | head -n 20
    exit 1
  fi
  exit $rc
fi

lc="$here/local-cluster.sh"
submit="$here/submit-index.sh"
fake="$here/fake-msrag.sh"
export MSRAG_SLURM_POLL=0.5

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
work=$(mktemp -d /tmp/msrag-slurm-test.XXXXXX)
started=0

finish() {
  if ((started && !keep)); then "$lc" stop >/dev/null 2>&1; fi
  rm -rf "$work"
  echo "slurm: $pass passed, $fail failed"
  ((fail == 0))
  exit $?
}
trap finish EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# ---- 1. start -----------------------------------------------------------------------
if "$lc" status >/dev/null 2>&1; then was_up=1; else was_up=0; fi
t=$(now)
if "$lc" start >"$work/start.log" 2>&1; then
  ok "cluster start ($(secs "$t" "$(now)")s, was running: $was_up)"
  ((was_up)) || started=1
else
  bad "cluster start"; cat "$work/start.log"
  exit 1
fi
eval "$("$lc" env)"

pids() { cat "${MSRAG_SLURM_DIR:-/var/lib/msrag-slurm}"/{slurmctld,slurmd}.pid 2>/dev/null | paste -sd,; }
before=$(pids)
if "$lc" start >"$work/start2.log" 2>&1 && grep -q "already running" "$work/start2.log" && [[ $(pids) == "$before" ]]; then
  ok "second start is a no-op"
else
  bad "second start is a no-op"; cat "$work/start2.log"
fi

# ---- 2. plain array + afterok dependency -------------------------------------------
mkdir -p "$work/plain"
# shellcheck disable=SC2016 # $SLURM_ARRAY_TASK_ID expands in the job
a=$(cd "$work/plain" && sbatch --parsable --array=0-3 -o 'arr-%a.out' --wrap 'echo $SLURM_ARRAY_TASK_ID')
(cd "$work/plain" && sbatch --parsable --wait --dependency="afterok:${a%%;*}" -o 'dep.out' \
  --wrap 'cat arr-0.out arr-1.out arr-2.out arr-3.out | paste -sd" "' >/dev/null)
rc=$?
got=$(cat "$work/plain/dep.out" 2>/dev/null)
if ((rc == 0)) && [[ $got == "0 1 2 3" ]]; then
  ok "sbatch --array=0-3 then --dependency=afterok (dependent job read: $got)"
else
  bad "sbatch --array=0-3 then --dependency=afterok (rc $rc, dependent job read: '$got')"
fi

# ---- 3. sharded build through submit-index.sh --------------------------------------
corpus="$work/corpus.jsonl"
echo '{"id": "d1", "text": "x"}' >"$corpus"
t=$(now)
MSRAG=$fake "$submit" --wait --timeout 60 "$corpus" "$work/idx" 3 -- --windows 100,200 --label "two words" \
  >"$work/submit.out" 2>"$work/submit.err"
rc=$?
t_slurm=$(secs "$t" "$(now)")
if ((rc == 0)) && grep -q "check-shards: 3 ok, 0 bad, 3 expected in .*; 3 docs" "$work/submit.err"; then
  ok "submit-index.sh --wait, 3 shards (${t_slurm}s from submit to done)"
else
  bad "submit-index.sh --wait, 3 shards (rc $rc)"; cat "$work/submit.err"
fi
if grep -qx 'index_job=[0-9]*' "$work/submit.out" && grep -qx 'check_job=[0-9]*' "$work/submit.out"; then
  ok "job ids printed"
else
  bad "job ids printed"; cat "$work/submit.out"
fi
all=1
for i in 0 1 2; do
  m="$work/idx/shard-$i/manifest.json"
  grep -q "\"shard\": \"$i/3\"" "$m" 2>/dev/null || all=0
  grep -qF '"--windows", "100,200", "--label", "two words"' "$m" 2>/dev/null || all=0
done
if ((all)); then ok "each shard got --shard i/3 and the extra args intact"; else bad "shard args"; cat "$work"/idx/shard-*/manifest.json; fi

# ---- 4. one shard fails ------------------------------------------------------------
FAKE_MSRAG_FAIL_SHARD=1 MSRAG=$fake "$submit" --wait --timeout 60 "$corpus" "$work/idx-fail" 3 \
  >"$work/fail.out" 2>"$work/fail.err"
rc=$?
if ((rc != 0)) && grep -q "task [0-9]*_1: FAILED" "$work/fail.err" && grep -q "check [0-9]*: CANCELLED" "$work/fail.err"; then
  ok "a failed shard fails the build and cancels the check job"
else
  bad "a failed shard fails the build (rc $rc)"; cat "$work/fail.err"
fi
if [[ -z $(squeue -h 2>/dev/null) ]]; then ok "no job left in the queue"; else bad "jobs left in the queue"; squeue; fi

# ---- 5. --resume rebuilds only the missing shard -----------------------------------
FAKE_MSRAG_CALLS="$work/calls" MSRAG=$fake "$submit" --resume --wait --timeout 60 "$corpus" "$work/idx-fail" 3 \
  >/dev/null 2>"$work/resume.err"
rc=$?
if ((rc == 0)) && [[ $(cat "$work/calls" 2>/dev/null) == "1/3" ]]; then
  ok "--resume builds only the missing shard"
else
  bad "--resume (rc $rc, calls: $(paste -sd' ' "$work/calls" 2>/dev/null))"; cat "$work/resume.err"
fi

# ---- 6. --timeout cancels ----------------------------------------------------------
t=$(now)
FAKE_MSRAG_SLEEP=60 MSRAG=$fake "$submit" --wait --timeout 3 "$corpus" "$work/idx-slow" 2 \
  >/dev/null 2>"$work/slow.err"
rc=$?
sleep 1
if ((rc != 0)) && grep -q "timed out" "$work/slow.err" && [[ -z $(squeue -h 2>/dev/null) ]]; then
  ok "--timeout cancels both jobs ($(secs "$t" "$(now)")s)"
else
  bad "--timeout (rc $rc)"; cat "$work/slow.err"; squeue
fi

# ---- 7. check-shards on its own ----------------------------------------------------
cp -r "$work/idx" "$work/idx-broken"
rm "$work/idx-broken/shard-2/manifest.json"
echo 'not json' >"$work/idx-broken/shard-1/manifest.json"
mkdir -p "$work/idx-broken/shard-7"
out=$(OUT="$work/idx-broken" NSHARDS=3 bash "$here/check-shards.sbatch" 2>&1)
rc=$?
if ((rc != 0)) && grep -q "shard 2: NO MANIFEST" <<<"$out" && grep -q "shard 1: BAD MANIFEST" <<<"$out" && grep -q "shard 7: UNEXPECTED" <<<"$out"; then
  ok "check-shards reports a missing manifest, a bad one and a stray shard"
else
  bad "check-shards on a broken build (rc $rc)"; echo "$out"
fi

# ---- 8. optional: the real msrag (MSRAG_TEST_BIN=path, e.g. bin/msrag after make build) --------
if [[ -n ${MSRAG_TEST_BIN:-} ]]; then
  real=$(realpath -m "$MSRAG_TEST_BIN")
  python3 -c '
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(300):
        f.write(json.dumps({"_id": "d%d" % i, "text": " ".join("w%d" % ((i * 7 + j) % 97) for j in range(120))}) + "\n")
' "$work/real.jsonl"
  MSRAG=$real "$submit" --wait --timeout 60 "$work/real.jsonl" "$work/idx-real" 3 -- \
    --model hash-test-embedder --windows 50,100 --block-lines 50 --quiet >/dev/null 2>"$work/real.err"
  rc=$?
  if ((rc == 0)) && grep -q "check-shards: 3 ok, 0 bad, 3 expected in .*; 300 docs" "$work/real.err"; then
    ok "real msrag: 3 shards of 300 docs with the hash test embedder"
  else
    bad "real msrag (rc $rc)"; cat "$work/real.err"
  fi
else
  echo "SKIP real msrag (set MSRAG_TEST_BIN=bin/msrag to run it)"
fi

# ---- overhead: the same 3 fake shards run directly, one after another ----------------
t=$(now)
for i in 0 1 2; do
  "$fake" index --corpus "$corpus" --out "$work/direct/shard-$i" --shard "$i/3" >/dev/null || bad "direct run"
done
echo "overhead: 3 fake shards + check: ${t_slurm}s through Slurm (submit to done), $(secs "$t" "$(now)")s run directly"
