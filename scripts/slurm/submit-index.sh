#!/usr/bin/env bash
# Submits a sharded msrag index build to Slurm: a job array of NSHARDS tasks
# (scripts/slurm/index.sbatch, task i builds OUT/shard-i) and a check job that runs after all
# of them succeed (scripts/slurm/check-shards.sbatch, --dependency=afterok).
#
#   scripts/slurm/submit-index.sh [options] CORPUS OUT NSHARDS [-- more msrag index args]
#
# Options:
#   --wait           block until both jobs end; exit 0 only if every task and the check succeeded
#   --timeout S      with --wait: cancel both jobs and exit 1 after S seconds
#   --resume         skip shards whose manifest.json already exists (rerun after a failure); without
#                    it a shard already built is refused: pass -- --rebuild to build it again
#   --max-parallel N run at most N array tasks at once (--array=0-(N-1)%N)
#   --sbatch-arg A   pass A to both sbatch calls (repeatable), e.g. --sbatch-arg=--partition=gpu
#   --index-sbatch-arg A   pass A to the array job only, e.g. --index-sbatch-arg=--gres=gpu:1
#
# Environment: MSRAG (msrag binary for the jobs, default msrag on PATH; must exist on the
# compute nodes), MSRAG_SLURM_POLL (seconds between state polls with --wait, default 2).
# CORPUS and OUT must be on a file system that every compute node sees. Task logs go to
# OUT/logs/. Prints index_job=<id> and check_job=<id> on stdout; everything else on stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prog=submit-index
# shellcheck source=lib.sh
. "$here/lib.sh"
log() { echo "$prog: $*" >&2; }

index_only=() pos=() extra=()
while (($#)); do
  common_option "$@"
  if ((took)); then shift "$took"; continue; fi
  case $1 in
    --index-sbatch-arg) index_only+=("$2"); shift 2 ;;
    --index-sbatch-arg=*) index_only+=("${1#*=}"); shift ;;
    -h | --help) usage ;;
    --) shift; extra=("$@"); break ;;
    -*) log "unknown option $1"; usage ;;
    *) pos+=("$1"); shift ;;
  esac
done
((${#pos[@]} == 3)) || usage
corpus=${pos[0]} out=${pos[1]} nshards=${pos[2]}
if ! [[ $nshards =~ ^[0-9]+$ ]] || ((nshards == 0)); then log "NSHARDS must be a positive integer, got $nshards"; exit 2; fi
check_common
command -v sbatch >/dev/null || { log "sbatch not found (is this a Slurm submit host?)"; exit 1; }

# Jobs start in the submission directory, maybe on another node: pass absolute paths.
out=$(realpath -m -- "$out")
[[ -e $corpus ]] && corpus=$(realpath -- "$corpus")
msrag=${MSRAG:-msrag}
if [[ $msrag == */* ]]; then
  msrag=$(realpath -m -- "$msrag")
  [[ -x $msrag ]] || log "warning: MSRAG=$msrag is not executable here"
fi
mkdir -p "$out/logs"

index_args=""
if ((${#extra[@]})); then
  index_args=$(printf '%q ' "${extra[@]}")
  index_args=${index_args% }
fi
export CORPUS=$corpus OUT=$out NSHARDS=$nshards MSRAG=$msrag MSRAG_INDEX_ARGS=$index_args MSRAG_RESUME=$resume

array="0-$((nshards - 1))"
((max_parallel > 0)) && array+="%$max_parallel"

t_submit=$(date +%s.%N)
index_job=$(sbatch --parsable --export=ALL --array="$array" \
  --output="$out/logs/index-%A_%a.out" "${common[@]}" "${index_only[@]}" \
  "$here/index.sbatch")
index_job=${index_job%%;*}
# --kill-on-invalid-dep: if a task fails, cancel the check job instead of leaving it pending forever.
check_job=$(sbatch --parsable --export=ALL --dependency="afterok:$index_job" --kill-on-invalid-dep=yes \
  --output="$out/logs/check-%j.out" "${common[@]}" \
  "$here/check-shards.sbatch")
check_job=${check_job%%;*}
echo "index_job=$index_job"
echo "check_job=$check_job"
log "submitted array $index_job (--array=$array) and check $check_job (afterok:$index_job); logs in $out/logs"
((wait_for)) || exit 0

# ---- --wait -------------------------------------------------------------------------
wait_jobs "$timeout" "$index_job" "$check_job" || exit 1
elapsed=$(awk -v a="$t_submit" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

failed=0 ntasks=0 nok=0
check_state=""
while read -r id st ec rs; do
  [[ -z $id ]] && continue
  if [[ $id == "$check_job" ]]; then
    check_state="$st $ec"
    [[ $st == COMPLETED && $ec == 0:0 ]] || failed=1
    continue
  fi
  ntasks=$((ntasks + 1))
  if [[ $st == COMPLETED && $ec == 0:0 ]]; then
    nok=$((nok + 1))
  else
    failed=1
    log "task $id: $st exit $ec"
    f="$out/logs/index-${id%%_*}_${id##*_}.out"
    [[ -f $f ]] && tail -n 20 "$f" | sed 's/^/    /' >&2
  fi
done <<<"$states"
log "array $index_job: $nok/$ntasks tasks ok; check $check_job: $check_state; ${elapsed}s from submit"
check_log="$out/logs/check-$check_job.out"
[[ -f $check_log ]] && sed 's/^/  /' "$check_log" >&2
if ((failed)); then
  log "FAILED"
  exit 1
fi
log "ok: $nshards shards in $out"
