# Shared by scripts/slurm/submit-*.sh: Slurm job states and waiting for jobs.
# Source it; it defines log() only if the caller has not.

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
