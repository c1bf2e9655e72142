#!/usr/bin/env bash
# Peak memory of msrag embed against a server that answers a 256 MiB body
# (huge-body: a 200; huge-error: a 500), with the msrag binary given (default
# bin/msrag). Prints the fault, exit code, wall time and maximum RSS.
#
#   scripts/hostile-server-memory.sh [MSRAG-BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/msrag}
tok=$(mktemp -d)/tokenizer.json
gzip -dc tokenizer/testdata/bert-uncased.tokenizer.json.gz >"$tok"
go build -o /tmp/faultserve.$$ ./scripts/faultserve
for fault in huge-body huge-error; do
	/tmp/faultserve.$$ -fault "$fault" -after 1 >/tmp/faultserve.$$.url &
	pid=$!
	for _ in $(seq 50); do [ -s /tmp/faultserve.$$.url ] && break; sleep 0.1; done
	url=$(cat /tmp/faultserve.$$.url)
	set +e
	printf '"a text to embed"\n' | /usr/bin/time -f "%e s, max RSS %M KiB" \
		"$bin" embed --model "openai:$url/v1" --tokenizer "$tok" --retries -1 >/dev/null 2>/tmp/faultserve.$$.err
	code=$?
	set -e
	echo "$fault: exit $code, $(tail -1 /tmp/faultserve.$$.err)"
	kill "$pid"; wait "$pid" 2>/dev/null || true
	rm -f /tmp/faultserve.$$.url
done
rm -f /tmp/faultserve.$$ /tmp/faultserve.$$.err
