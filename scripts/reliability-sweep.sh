#!/usr/bin/env bash
# Runs msrag on the bad inputs of docs/reliability.md and prints, for each, the
# exit code and the message; afterwards it lists what is left in the work
# directory. Needs bin/msrag (make build) and the hash test embedder's
# tokenizer in the cache (make setup).
#
#   scripts/reliability-sweep.sh [WORKDIR]   (default: a new temporary directory)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export MSRAG_CACHE=${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}
M=$root/bin/msrag
work=${1:-$(mktemp -d)}
cd "$work"
printf '{"_id":"a","text":"alpha beta gamma"}\n{"_id":"b","text":"delta epsilon"}\n' >good.jsonl
printf '{"_id":"a","text":"alpha"}\n{"_id":"a","text":"beta"}\n' >dup.jsonl
printf '{"_id":"a","text":"alpha"}\n{"_id":"b","text": oops}\n' >bad.jsonl
gzip -c good.jsonl | head -c 30 >trunc.jsonl.gz
: >empty.jsonl
printf '{"_id":"a","text":"bad \xff bytes"}\n' >utf8.jsonl
printf 'q1\talpha\n' >q.tsv
printf 'q1\t \n' >qempty.tsv
run() {
  echo "=== $*"
  "$@" >out.txt 2>err.txt
  echo "exit $?"
  grep -v '^eval: \|^index: [0-9]' err.txt | head -3
}
H=(--model hash-test-embedder --windows 4,8 --quiet)
run "$M" index --corpus dup.jsonl --out i-dup "${H[@]}"
run "$M" index --corpus bad.jsonl --out i-bad "${H[@]}"
run "$M" index --corpus trunc.jsonl.gz --out i-trunc "${H[@]}"
run "$M" index --corpus empty.jsonl --out i-empty "${H[@]}"
run "$M" index --corpus utf8.jsonl --out i-utf8 "${H[@]}"
run "$M" index --corpus good.jsonl --out i-long --model hash-test-embedder --windows 600
run "$M" index --corpus good.jsonl --out i-rep --model hash-test-embedder --windows 4,4
run "$M" index --corpus good.jsonl --out i-gpus "${H[@]}" --gpus 0,x
run "$M" index --corpus good.jsonl --out i-m --model no-such-model
run "$M" index --corpus good.jsonl --out idx "${H[@]}"
run "$M" search --index idx --queries q.tsv --fusion bogus
run "$M" search --index idx --queries q.tsv --fusion w=300
run "$M" search --index idx --queries q.tsv --format xml
run "$M" search --index idx --queries missing.tsv
run "$M" search --index idx --queries qempty.tsv
cp -r idx idx-corrupt
python3 -c "p='idx-corrupt/w4.faiss'; b=bytearray(open(p,'rb').read()); b[len(b)//2]^=0xff; open(p,'wb').write(b)"
run "$M" search --index idx-corrupt --queries q.tsv
cp -r idx idx-trunc
python3 -c "p='idx-trunc/w8.faiss'; b=open(p,'rb').read(); open(p,'wb').write(b[:len(b)//2])"
run "$M" search --index idx-trunc --queries q.tsv --skip-verify
cp -r idx idx-nochunks && rm idx-nochunks/w4.chunks.parquet
run "$M" search --index idx-nochunks --queries q.tsv
echo "=== left in $work:"
ls -A
