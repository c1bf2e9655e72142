#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests and CI.
#
#   scripts/slurm/local-cluster.sh start    install, configure and start (no-op when already up)
#   scripts/slurm/local-cluster.sh stop     stop the daemons this script started
#   scripts/slurm/local-cluster.sh status   sinfo and squeue
#   scripts/slurm/local-cluster.sh env      print "export SLURM_CONF=..." for other shells
#   scripts/slurm/local-cluster.sh install  only install the packages (start does it too)
#
# What start does:
#   1. installs Debian's slurm-wlm and munge if missing (needs root; apt-get, non-interactive);
#   2. makes sure a munge key exists (owned by munge, mode 0400) and starts munged as the munge user;
#   3. writes a one-node slurm.conf to $MSRAG_SLURM_DIR/slurm.conf: node = `hostname -s`,
#      CPUs = nproc, RealMemory = MemTotal minus a margin, partition "debug" (default),
#      select/cons_tres, proctrack/linuxproc, task/none (no cgroups: works in containers),
#      no accounting, SlurmUser=root, all state, spool, pid and log files under $MSRAG_SLURM_DIR;
#   4. copies it to /etc/slurm/slurm.conf, where Slurm's commands look by default, unless that
#      file exists and was not written by this script (then callers must export SLURM_CONF,
#      see `env`);
#   5. starts slurmctld and slurmd directly (no systemd needed) and waits until sinfo shows the
#      node idle; on timeout it prints the daemons' logs and exits 1.
#
# Environment:
#   MSRAG_SLURM_DIR      work directory (default /var/lib/msrag-slurm)
#   MSRAG_SLURM_TIMEOUT  seconds to wait for the node to become idle (default 60)
#   MSRAG_SLURM_MEM_MARGIN_MB  memory kept out of RealMemory (default: 10% of MemTotal, at least 256)
#   MSRAG_SLURM_PORTS    "ctld,slurmd" TCP ports (default 6817,6818)
set -euo pipefail

dir=${MSRAG_SLURM_DIR:-/var/lib/msrag-slurm}
timeout=${MSRAG_SLURM_TIMEOUT:-60}
ports=${MSRAG_SLURM_PORTS:-6817,6818}
conf="$dir/slurm.conf"
etc_conf=/etc/slurm/slurm.conf
marker="# Written by msrag scripts/slurm/local-cluster.sh"

log() { echo "local-cluster: $*" >&2; }
die() { log "error: $*"; exit 1; }

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root (installs packages and starts daemons)"; }

# pid_alive FILE: the pid in FILE names a live process whose name is FILE's base name
# without .pid (slurmctld, slurmd, munged), so a stale file with a reused pid does not count.
pid_alive() {
  local f=$1 pid name
  [[ -s $f ]] || return 1
  pid=$(<"$f")
  name=$(basename "$f" .pid)
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]] &&
    # A killed daemon stays a zombie until init reaps it: that is dead too.
    [[ $(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) != Z ]]
}

install_packages() {
  local need=() p
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  ((${#need[@]})) || return 0
  log "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confold "${need[@]}" >/dev/null
}

# Slurm needs the node name to resolve to this machine.
ensure_hostname() {
  local h
  h=$(hostname -s)
  if ! getent hosts "$h" >/dev/null; then
    log "adding $h to /etc/hosts"
    echo "127.0.1.1 $h" >>/etc/hosts
  fi
}

start_munge() {
  local key=/etc/munge/munge.key
  install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
  install -d -o munge -g munge -m 0755 /run/munge
  if [[ ! -s $key ]]; then
    log "creating munge key $key"
    if command -v mungekey >/dev/null; then
      mungekey --create --keyfile="$key" --force
    else
      dd if=/dev/urandom of="$key" bs=1 count=1024 status=none
    fi
  fi
  chown munge:munge "$key"
  chmod 0400 "$key"
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
    return 0 # a munged already answers (ours or the system's)
  fi
  log "starting munged"
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged
  local pid
  for _ in $(seq 50); do
    if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
      pid=$(cat /run/munge/munged.pid 2>/dev/null || true)
      [[ -n $pid ]] && echo "$pid" >"$dir/munged.pid" # so that stop ends only the munged we started
      return 0
    fi
    sleep 0.1
  done
  tail -n 30 /var/log/munge/munged.log >&2 2>/dev/null || true
  die "munged does not answer"
}

write_conf() {
  local host cpus mem_kb mem_mb margin ctld_port slurmd_port tmp
  host=$(hostname -s)
  cpus=$(nproc)
  mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
  mem_mb=$((mem_kb / 1024))
  margin=${MSRAG_SLURM_MEM_MARGIN_MB:-$((mem_mb / 10))}
  ((margin >= 256)) || margin=256
  mem_mb=$((mem_mb - margin))
  ((mem_mb >= 1)) || mem_mb=1
  IFS=, read -r ctld_port slurmd_port <<<"$ports"
  mkdir -p "$dir"/{state,spool,log}
  tmp=$(mktemp "$dir/slurm.conf.XXXXXX")
  cat >"$tmp" <<EOF
$marker
# One node, one partition, no cgroups, no accounting. Regenerated on every start.
ClusterName=msrag-local
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
SwitchType=switch/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
# Schedule as soon as something changes: short jobs in tests should not wait for a cycle.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  chmod 0644 "$tmp"
  if [[ -f $conf ]] && cmp -s "$tmp" "$conf"; then
    rm -f "$tmp"
    conf_changed=0
  else
    mv "$tmp" "$conf"
    conf_changed=1
  fi
  if [[ ! -e $etc_conf ]] || grep -qxF "$marker" "$etc_conf"; then
    mkdir -p "$(dirname "$etc_conf")"
    cmp -s "$conf" "$etc_conf" 2>/dev/null || cp "$conf" "$etc_conf"
    etc_ours=1
  else
    etc_ours=0
    log "$etc_conf belongs to another Slurm setup and is left alone; use: export SLURM_CONF=$conf"
  fi
}

running() { pid_alive "$dir/slurmctld.pid" && pid_alive "$dir/slurmd.pid"; }

node_state() { { SLURM_CONF=$conf sinfo -h -N -n "$(hostname -s)" -o '%t' 2>/dev/null || true; } | head -n1; }

dump_logs() {
  local f
  for f in "$dir/log/slurmctld.log" "$dir/log/slurmd.log" /var/log/munge/munged.log; do
    echo "----- last lines of $f" >&2
    tail -n 40 "$f" >&2 2>/dev/null || echo "(missing)" >&2
  done
  echo "----- sinfo" >&2
  SLURM_CONF=$conf sinfo -N -l >&2 2>&1 || true
}

stop_daemon() { # stop_daemon NAME PIDFILE
  local name=$1 f=$2 pid
  pid_alive "$f" || { rm -f "$f"; return 0; }
  pid=$(<"$f")
  log "stopping $name ($pid)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$f"; return 0; }
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
}

cmd_start() {
  need_root
  install_packages
  mkdir -p "$dir"
  ensure_hostname
  start_munge
  conf_changed=0
  write_conf
  if running && ((conf_changed == 0)); then
    local st
    st=$(node_state)
    if [[ $st == idle || $st == mix || $st == alloc ]]; then
      log "already running (node $(hostname -s) is $st)"
      print_env_hint
      return 0
    fi
  fi
  if ((conf_changed)); then
    stop_daemon slurmd "$dir/slurmd.pid"
    stop_daemon slurmctld "$dir/slurmctld.pid"
  fi
  export SLURM_CONF=$conf
  local t0=$SECONDS
  if ! pid_alive "$dir/slurmctld.pid"; then
    log "starting slurmctld"
    # -i: ignore state that no longer matches the configuration (e.g. after a host rename).
    slurmctld -f "$conf" -i || { dump_logs; die "slurmctld did not start"; }
  fi
  if ! pid_alive "$dir/slurmd.pid"; then
    log "starting slurmd"
    slurmd -f "$conf" || { dump_logs; die "slurmd did not start"; }
  fi
  local st=""
  while ((SECONDS - t0 < timeout)); do
    st=$(node_state)
    case $st in
      idle | mix | alloc) break ;;
      down* | drain* | drng*)
        # A node left down by an earlier run: bring it back.
        SLURM_CONF=$conf scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
        ;;
    esac
    sleep 0.5
  done
  case $st in
    idle | mix | alloc) ;;
    *)
      dump_logs
      die "node $(hostname -s) not idle after ${timeout}s (state: ${st:-unknown})"
      ;;
  esac
  log "up in $((SECONDS - t0))s: node $(hostname -s) is $st (config $conf)"
  print_env_hint
}

print_env_hint() {
  if ((${etc_ours:-1} == 0)); then
    log "run: export SLURM_CONF=$conf"
  fi
}

cmd_stop() {
  stop_daemon slurmd "$dir/slurmd.pid"
  stop_daemon slurmctld "$dir/slurmctld.pid"
  stop_daemon munged "$dir/munged.pid"
  log "stopped"
}

cmd_status() {
  [[ -f $conf ]] || die "not configured ($conf missing); run: $0 start"
  local ok=0
  if pid_alive "$dir/slurmctld.pid"; then echo "slurmctld: running (pid $(<"$dir/slurmctld.pid"))"; else echo "slurmctld: stopped"; ok=1; fi
  if pid_alive "$dir/slurmd.pid"; then echo "slurmd:    running (pid $(<"$dir/slurmd.pid"))"; else echo "slurmd:    stopped"; ok=1; fi
  echo "config:    $conf"
  if ((ok == 0)); then
    SLURM_CONF=$conf sinfo
    SLURM_CONF=$conf squeue
  fi
  return $ok
}

case ${1:-} in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) echo "export SLURM_CONF=$conf" ;;
  install) need_root; install_packages ;;
  *)
    echo "usage: $0 start|stop|status|env|install" >&2
    exit 2
    ;;
esac
