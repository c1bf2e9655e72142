#!/usr/bin/env bash
# Submits a scatter-gather msrag search (or eval) over the shards of a sharded index to
# Slurm: the statistics phase as a job array (task i: shard i's statistics, the i-th block of
# the queries embedded), the scatter phase as a job array after it (task i: shard i alone
# searched, its lists written), and the gather after that (every shard's lists merged, fused
# and written), each with --dependency=afterok (scripts/slurm/search.sbatch runs every task).
#
#   scripts/slurm/submit-search.sh [options] INDEX WORK -- search|eval ARGS...
#
#   INDEX  the directory of shard directories (scripts/slurm/submit-index.sh's OUT)
#   WORK   the directory the phases share (created; on a file system every node sees)
#   ARGS   the msrag search or eval arguments every phase gets (--queries, --out, --fusion,
#          --dataset, --model, ...); --index, --phase, --work and --shard are added
#
# Options:
#   --wait           block until every job ends; exit 0 only if every task succeeded
#   --timeout S      with --wait: cancel the jobs and exit 1 after S seconds
#   --resume         submit only the tasks whose record is not yet in WORK (rerun after a
#                    failure: the tasks that finished are not run again), and no phase
#                    whose every task finished
#   --max-parallel N run at most N tasks of an array at once
#   --sbatch-arg A   pass A to every sbatch call (repeatable), e.g. --sbatch-arg=--partition=gpu
#   --stats-sbatch-arg A, --scatter-sbatch-arg A, --gather-sbatch-arg A
#                    pass A to that phase's jobs only (the statistics phase embeds the
#                    queries: --gres=gpu:1 there; the scatter tasks hold a shard: --mem there)
#
# Environment: MSRAG (msrag binary for the jobs, default msrag on PATH; must exist on the
# compute nodes), MSRAG_SLURM_POLL (seconds between state polls with --wait, default 2).
# Task logs go to WORK/logs/. Prints stats_job=, scatter_job= and gather_job= (each
# submitted job's id) on stdout; everything else on stderr.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prog=submit-search
# shellcheck source=lib.sh
. "$here/lib.sh"
log() { echo "$prog: $*" >&2; }

stats_only=() scatter_only=() gather_only=() pos=() extra=()
while (($#)); do
  common_option "$@"
  if ((took)); then shift "$took"; continue; fi
  case $1 in
    --stats-sbatch-arg) stats_only+=("$2"); shift 2 ;;
    --stats-sbatch-arg=*) stats_only+=("${1#*=}"); shift ;;
    --scatter-sbatch-arg) scatter_only+=("$2"); shift 2 ;;
    --scatter-sbatch-arg=*) scatter_only+=("${1#*=}"); shift ;;
    --gather-sbatch-arg) gather_only+=("$2"); shift 2 ;;
    --gather-sbatch-arg=*) gather_only+=("${1#*=}"); shift ;;
    -h | --help) usage ;;
    --) shift; extra=("$@"); break ;;
    -*) log "unknown option $1"; usage ;;
    *) pos+=("$1"); shift ;;
  esac
done
((${#pos[@]} == 2)) || usage
((${#extra[@]})) || { log "give the msrag command after --: search ARGS or eval ARGS"; exit 2; }
case ${extra[0]} in search | eval) ;; *) log "the command after -- is search or eval, not ${extra[0]}"; exit 2 ;; esac
for a in "${extra[@]}"; do
  case $a in --index | --index=* | --phase | --phase=* | --work | --work=* | --shard | --shard=*)
    log "$a: the script gives every task --index, --phase, --work and --shard"; exit 2 ;;
  esac
done
index=$(realpath -m -- "${pos[0]}") work=$(realpath -m -- "${pos[1]}")
check_common
command -v sbatch >/dev/null || { log "sbatch not found (is this a Slurm submit host?)"; exit 1; }

# The shards, as msrag lists them: INDEX itself when it is an index, else its subdirectories
# that are, in name order.
if [[ -s $index/manifest.json ]]; then
  nshards=1
else
  nshards=$(find "$index" -mindepth 2 -maxdepth 2 -name manifest.json -size +0 | wc -l)
fi
((nshards > 0)) || { log "no index in $index (msrag index, or scripts/slurm/submit-index.sh)"; exit 1; }

msrag=${MSRAG:-msrag}
if [[ $msrag == */* ]]; then
  msrag=$(realpath -m -- "$msrag")
  [[ -x $msrag ]] || log "warning: MSRAG=$msrag is not executable here"
fi
mkdir -p "$work/logs"
search_args=$(printf '%q ' "${extra[@]}")
export INDEX=$index WORK=$work NSHARDS=$nshards MSRAG=$msrag MSRAG_SEARCH_ARGS=${search_args% } MSRAG_RESUME=$resume

# tasks PHASEDIR: the array tasks to submit, "0-(n-1)" or, with --resume, those without a
# record ("" when every task finished).
tasks() {
  local dir=$1 i list=()
  if ((!resume)); then
    echo "0-$((nshards - 1))"
    return
  fi
  for ((i = 0; i < nshards; i++)); do
    [[ -s $(printf '%s/%s/%05d.json' "$work" "$dir" "$i") ]] || list+=("$i")
  done
  (IFS=,; echo "${list[*]}")
}

submitted=() dep=""
submit_phase() { # PHASE ARRAY [sbatch args...]
  local phase=$1 array=$2 id args=()
  shift 2
  [[ -n $dep ]] && args+=(--dependency="afterok:$dep" --kill-on-invalid-dep=yes)
  if [[ $phase == gather ]]; then
    args+=(--output="$work/logs/gather-%j.out")
  else
    ((max_parallel > 0)) && array+="%$max_parallel"
    args+=(--array="$array" --output="$work/logs/$phase-%A_%a.out")
  fi
  id=$(PHASE=$phase sbatch --parsable --export=ALL --job-name="msrag-$phase" "${args[@]}" "${common[@]}" "$@" "$here/search.sbatch")
  id=${id%%;*}
  echo "${phase}_job=$id"
  log "submitted $phase${array:+ (--array=$array)} as $id${dep:+ (afterok:$dep)}"
  submitted+=("$id")
  dep=$id
}

t_submit=$(date +%s.%N)
st=$(tasks stats)
[[ -n $st ]] && submit_phase stats "$st" "${stats_only[@]}"
# A statistics task run again writes the same statistics (they are the shard's, for the
# same queries), so the lists already written stay good (the gather checks that they were
# all searched with the same).
sc=$(tasks lists)
[[ -n $sc ]] && submit_phase scatter "$sc" "${scatter_only[@]}"
submit_phase gather "" "${gather_only[@]}"
((wait_for)) || exit 0

wait_jobs "$timeout" "${submitted[@]}" || exit 1
elapsed=$(awk -v a="$t_submit" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
failed=0 ntasks=0 nok=0
while read -r id st ec rs; do
  [[ -z $id ]] && continue
  ntasks=$((ntasks + 1))
  if [[ $st == COMPLETED && $ec == 0:0 ]]; then
    nok=$((nok + 1))
    continue
  fi
  failed=1
  log "task $id: $st exit $ec"
  for f in "$work"/logs/*-"${id%%_*}_${id##*_}".out "$work/logs/gather-$id.out"; do
    [[ -f $f ]] && tail -n 20 "$f" | sed 's/^/    /' >&2
  done
done <<<"$states"
log "$nok/$ntasks tasks ok; ${elapsed}s from submit"
if ((failed)); then
  log "FAILED (rerun with --resume to run only the tasks that did not finish)"
  exit 1
fi
log "ok: $nshards shards searched, gathered from $work"
