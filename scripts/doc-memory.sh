#!/usr/bin/env bash
# Peak memory of msrag index on a corpus of one long document (one JSONL
# line of words drawn from a 30-word list, seed 1), generated here, never
# committed. Prints size, windows, exit code, wall time and maximum RSS.
#
#   scripts/doc-memory.sh [MSRAG-BINARY] [MB...]     (default bin/msrag, 5 and 100)
#   WINDOWS=64,128,254 EXTRA='--max-doc-bytes 104857600' scripts/doc-memory.sh bin/msrag 100
set -euo pipefail
bin=${1:-bin/msrag}
shift || true
sizes=${*:-5 100}
windows=${WINDOWS:-254}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mb in $sizes; do
	python3 - "$tmp/doc.jsonl" "$mb" <<'PY'
import json, random, sys
random.seed(1)
words = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
         "upsilon phi chi psi omega retrieval fusion window chunk corpus index").split()
size, parts, n = int(float(sys.argv[2]) * 10**6), [], 0
while n < size:
    w = random.choice(words); parts.append(w); n += len(w) + 1
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"_id": "big", "text": " ".join(parts)}) + "\n")
PY
	set +e
	# shellcheck disable=SC2086
	/usr/bin/time -f "%e s, max RSS %M KiB" "$bin" index --corpus "$tmp/doc.jsonl" --out "$tmp/idx" \
		--model hash-test-embedder --windows "$windows" --quiet ${EXTRA:-} >/dev/null 2>"$tmp/err"
	code=$?
	set -e
	echo "$mb MB, windows $windows: exit $code, $(tail -1 "$tmp/err")"
	rm -rf "$tmp/idx" "$tmp/doc.jsonl"
done
