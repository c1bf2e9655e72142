#!/usr/bin/env bash
# docs/results.md's "Fusion across kinds" rows for a model other than the one
# the leave-one-dataset-out fusion models were fitted with. For each dataset,
# its reported split with every channel, dense, lexical, the previous and the
# present default, the oracle, and:
#   - the fusion model fitted on the OTHER datasets' training splits with
#     FROM's model (scripts/fusion-results.sh's transfer-without-DATASET.json):
#     a transfer across datasets and across models;
#   - a fusion model msrag tune fits on the dataset's own training split with
#     this model (in-domain; a dataset without a training split has none).
#
#   FROM=out/fusion-all-minilm-l6-v2-int8 scripts/fusion-cross-model.sh MODEL WINDOWS DATASET...
#
# WINDOWS must be FROM's (a fusion model fuses the channels it was fitted on).
# Indices: $IDX_DIR/DATASET when IDX_DIR is set, else $OUT/idx-DATASET, built
# by msrag eval on first use. Runs go to $OUT/DATASET-SPLIT (transferred) and
# $OUT/DATASET-SPLIT-learned, fusion models to $OUT/learned-DATASET.json; then
#
#   python3 scripts/fusion-summary.py combsum:norm=zscore,windows=all \
#       "LABEL=$OUT/DATASET-SPLIT=$FROM/transfer-without-DATASET.json" \
#       "LABEL, in-domain=$OUT/DATASET-SPLIT-learned=$OUT/learned-DATASET.json" ...
#
# Rerunning skips what is there. Every step is a plain msrag command.
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 3)) || { sed -n '2,24p' "$0" >&2; exit 2; }
model=$1 windows=$2
shift 2
from=${FROM:?FROM names the directory of scripts/fusion-results.sh for the model the transfer was fitted with}
# DATA: the data sets' folder; by default the cache's, which scripts/fetch-data.sh fills.
data=${DATA:-${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/data}
[[ -n ${DATA:-} ]] || scripts/fetch-data.sh "$@"
out=${OUT:-out/fusion-$model}
bin=${MSRAG:-bin/msrag}
mkdir -p "$out"
configs="windows,rrf:windows=dense,rrf:windows=lexical,combsum:norm=zscore;windows=all,hybrid,full,oracle"
common=(--model "$model" --windows "$windows" --quiet)
index() { if [[ -n ${IDX_DIR:-} ]]; then echo "$IDX_DIR/$1"; else echo "$out/idx-$1"; fi; }
split() { case $1 in qmsum) echo dev ;; *) echo test ;; esac; }

for ds in "$@"; do
    s=$(split "$ds")
    [[ -f $from/transfer-without-$ds.json ]] || { echo "fusion-cross-model: no $from/transfer-without-$ds.json" >&2; exit 1; }
    [[ -f $out/$ds-$s/results.json ]] ||
        "$bin" eval --dataset "$data/$ds" --split "$s" --index "$(index "$ds")" --out "$out/$ds-$s" \
            --configs "$configs" --fusion-model "$from/transfer-without-$ds.json" "${common[@]}"
    [[ -f $data/$ds/qrels/train.tsv ]] || continue
    [[ -f $out/learned-$ds.json ]] ||
        "$bin" tune --dataset "$data/$ds" --index "$(index "$ds")" --split train --out "$out/learned-$ds.json" --quiet
    [[ -f $out/$ds-$s-learned/results.json ]] ||
        "$bin" eval --dataset "$data/$ds" --split "$s" --index "$(index "$ds")" --out "$out/$ds-$s-learned" \
            --configs "$configs" --fusion-model "$out/learned-$ds.json" "${common[@]}"
done
echo "runs in $out"
