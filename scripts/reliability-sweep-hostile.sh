#!/usr/bin/env bash
# Runs msrag on the hostile inputs of docs/reliability.md ("Servers and the
# command line") and prints, for each, the exit code and the
# message; afterwards it lists what is left in the work directory. Needs
# bin/msrag (make build) and go (to build scripts/faultserve).
#
#   scripts/reliability-sweep-hostile.sh [WORKDIR]   (default: a new temporary directory)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export MSRAG_CACHE=${MSRAG_CACHE:-$root/.cache}
M=$root/bin/msrag
work=${1:-$(mktemp -d)}
(cd "$root" && go build -o "$work/faultserve" ./scripts/faultserve) || exit 1
cd "$work"
gzip -dc "$root/tokenizer/testdata/bert-uncased.tokenizer.json.gz" >tok.json
printf '{"_id":"a","text":"alpha beta gamma delta"}\n{"_id":"b","text":"delta epsilon zeta"}\n' >good.jsonl
printf 'q1\talpha\n' >q.tsv
run() {
  echo "=== ${*//"$M"/msrag}"
  "$@" >out.txt 2>err.txt
  echo "exit $?"
  head -c 600 err.txt | head -3
  echo
}
pids=()
serve() { # serve FAULT: start a server with FAULT after the probe, set $url
  ./faultserve -fault "$1" -after 1 -dims 16 >url.txt &
  pids+=($!)
  for _ in $(seq 50); do [ -s url.txt ] && break; sleep 0.1; done
  url=$(cat url.txt)
  rm -f url.txt
}
S=(--windows 4 --tokenizer tok.json --request-timeout 1s --retries -1 --quiet)
for fault in zero-vectors nan wrong-count changing-dims huge-body huge-error slow-headers slow-body reset-mid-body status; do
  serve "$fault"
  run "$M" index --corpus good.jsonl --out "i-$fault" --model "openai:$url/v1" "${S[@]}"
done
serve none
run "$M" index --corpus good.jsonl --out idx --model "openai:$url/v1" "${S[@]}"
serve zero-vectors
run "$M" search --index idx --queries q.tsv --endpoints "$url/v1" --retries -1 --out run.trec
run "$M" index --corpus good.jsonl --out i-q --model "openai:http://127.0.0.1:9/v1?api_key=hunter2" --tokenizer tok.json
run "$M" index --corpus good.jsonl --out i-u --model "openai:http://user:hunter2@127.0.0.1:9/v1" --tokenizer tok.json
run "$M" search --index idx --queries q.tsv --endpoints "http://127.0.0.1:9/v1?key=hunter2"
run "$M" search --bogus
run "$M" search --index idx
run "$M" search --index idx --queries q.tsv --k ten
run "$M" search --index idx --queries q.tsv --request-timeout 10
run "$M" search --index idx --queries q.tsv --request-timeout -5s
run "$M" index --corpus good.jsonl --out i-late --model all-minilm-l6-v2 --windows 16 --embedding late --late-overlap 253
printf '[1, 2]\n[7, -3]\n' >ids.txt
run sh -c "$M embed --model all-minilm-l6-v2 --ids <ids.txt"  # msrag embed --ids <ids.txt
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
echo "=== left in $work:"
ls -A
