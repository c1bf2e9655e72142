# Shared by scripts/slurm/submit-*.sh: the options they share, Slurm job states and waiting
# for jobs. Source it.

# usage prints the calling script's header comment and exits 2.
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

# The options every submit script has; common_option sets them.
wait_for=0 timeout=0 resume=0 max_parallel=0 common=()

# common_option ARGS...: takes one of the options every submit script has from the front of
# ARGS (--wait, --timeout S, --resume, --max-parallel N, --sbatch-arg A), setting the globals
# above, and sets took to how many arguments it took (0: not one of them).
common_option() {
  took=1
  case $1 in
    --wait) wait_for=1 ;;
    --timeout) timeout=$2; took=2 ;;
    --timeout=*) timeout=${1#*=} ;;
    --resume) resume=1 ;;
    --max-parallel) max_parallel=$2; took=2 ;;
    --max-parallel=*) max_parallel=${1#*=} ;;
    --sbatch-arg) common+=("$2"); took=2 ;;
    --sbatch-arg=*) common+=("${1#*=}") ;;
    *) took=0 ;;
  esac
}

# check_common fails (exit 2) unless the common options' values are numbers.
check_common() {
  [[ $timeout =~ ^[0-9]+$ ]] || { log "--timeout must be whole seconds"; exit 2; }
  [[ $max_parallel =~ ^[0-9]+$ ]] || { log "--max-parallel must be a number"; exit 2; }
}

# job_states ID: one "id state exitcode reason" line per job or array task. Uses scontrol
# (works without accounting while slurmctld remembers the job, MinJobAge), else sacct.
job_states() {
  local id=$1 out
  if out=$(scontrol show job -o "$id" 2>/dev/null) && [[ -n $out ]]; then
    awk '{
      id = ""; st = ""; ec = ""; rs = ""; aj = ""; at = ""
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == "JobId") id = kv[2]
        else if (kv[1] == "ArrayJobId") aj = kv[2]
        else if (kv[1] == "ArrayTaskId") at = substr($i, length("ArrayTaskId=") + 1)
        else if (kv[1] == "JobState") st = kv[2]
        else if (kv[1] == "ExitCode") ec = kv[2]
        else if (kv[1] == "Reason") rs = kv[2]
      }
      if (aj != "" && at != "") id = aj "_" at
      print id, st, ec, rs
    }' <<<"$out"
    return 0
  fi
  if out=$(sacct -n -X -P -j "$id" -o JobID,State,ExitCode,Reason 2>/dev/null) && [[ -n $out ]]; then
    awk -F'|' '{ split($2, s, " "); print $1, s[1], $3, ($4 == "" ? "None" : $4) }' <<<"$out"
    return 0
  fi
  return 1
}

terminal() {
  case $1 in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE | REVOKED) return 0 ;;
    *) return 1 ;;
  esac
}

# wait_jobs TIMEOUT JOB...: poll until every job (and array task) has ended, cancelling a job
# whose dependency can never be satisfied; after TIMEOUT seconds (0: none) cancel them all
# and return 1. Leaves the final states in the global $states ("id state exitcode reason"
# lines). Polls every $MSRAG_SLURM_POLL seconds (default 2).
wait_jobs() {
  local timeout=$1 poll=${MSRAG_SLURM_POLL:-2} t0=$SECONDS misses=0 done_all id st ec rs s
  shift
  while :; do
    done_all=1 states=""
    for id in "$@"; do
      if s=$(job_states "$id"); then
        states+="$s"$'\n'
      else
        states+="$id UNKNOWN 0:0 None"$'\n'
      fi
    done
    while read -r id st ec rs; do
      [[ -z $id ]] && continue
      if [[ $st == PENDING && $rs == DependencyNeverSatisfied ]]; then
        log "job $id can never run (a job it depends on failed); cancelling it"
        scancel "$id" 2>/dev/null || true
        done_all=0
      elif [[ $st == UNKNOWN ]]; then
        done_all=0
        misses=$((misses + 1))
      elif ! terminal "$st"; then
        done_all=0
      fi
    done <<<"$states"
    ((done_all)) && return 0
    if ((misses > 5)); then
      log "error: Slurm knows none of the jobs any more (no accounting and MinJobAge passed?)"
      return 1
    fi
    if ((timeout > 0 && SECONDS - t0 >= timeout)); then
      log "error: timed out after ${timeout}s; cancelling $*"
      scancel "$@" 2>/dev/null || true
      printf '%s' "$states" | sed 's/^/  /' >&2
      return 1
    fi
    sleep "$poll"
  done
}
