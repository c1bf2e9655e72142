#!/usr/bin/env bash
# Dense, lexical and hybrid on every dataset of docs/results.md (section
# "Lexical windows"): for each dataset, eval on the training split (where the
# default hybrid rule is chosen), msrag tune on it (the learned hybrid), and
# eval on the reported split with the fusion model. LongEmbed QMSum has no
# training split: its learned rule is cross-validated by meeting.
#
#   scripts/lexical-results.sh [MODEL [WINDOWS]]
#
# DATASETS="scifact qmsum" runs some of them.
# MODEL defaults to all-minilm-l6-v2-int8, WINDOWS to 64,128,254. Indices go
# to $OUT/idx-DATASET (built on first use, with lexical windows), runs to
# $OUT/DATASET-SPLIT, fusion models to $OUT/fusion-DATASET.json.
# scripts/lexical-select.py reads the training runs and names the rule with
# the best mean nDCG@10 over the training splits.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-all-minilm-l6-v2-int8}
windows=${2:-64,128,254}
# DATA: the data sets' folder; by default the cache's, which scripts/fetch-data.sh fills.
data=${DATA:-${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/data}
[[ -n ${DATA:-} ]] || scripts/fetch-data.sh ${DATASETS:-scifact nfcorpus qmsum qmsum-lembed}
out=${OUT:-out/lexical-$model}
bin=${MSRAG:-bin/msrag}
mkdir -p "$out"

# The candidates for the default hybrid: label-free rules over every dense
# and lexical channel. Their parameters come from docs/fusion.md's rules,
# fixed before these runs.
candidates='rrf:windows=all,rrf:windows=all;balance=kinds,rrf:windows=all;c=60,rrf:windows=all;c=60;balance=kinds,docrrf:windows=all,combsum:norm=zscore;windows=all,combsum:norm=zscore;windows=all;balance=kinds,combsum:norm=minmax;windows=all,combmnz:norm=zscore;windows=all,combsum:norm=zscore;adapt=top:0.1;windows=all,rrf:windows=all;adapt=top:0.03,rrf:windows=all;adapt=entropy:0.3,rrf:windows=all;balance=kinds;adapt=entropy:0.3'
configs="windows,rrf,hybrid,maxp,full,oracle,$candidates"
common=(--model "$model" --windows "$windows" --quiet)

run() { # dataset train-split report-split
    local ds=$1 train=$2 test=$3 idx=$out/idx-$1
    "$bin" eval --dataset "$data/$ds" --split "$train" --index "$idx" --out "$out/$ds-$train" --configs "$configs" "${common[@]}"
    "$bin" tune --dataset "$data/$ds" --split "$train" --index "$idx" --out "$out/fusion-$ds.json" --quiet
    "$bin" eval --dataset "$data/$ds" --split "$test" --index "$idx" --out "$out/$ds-$test" --configs "$configs" \
        --fusion-model "$out/fusion-$ds.json" "${common[@]}"
}

lembed() {
    "$bin" eval --dataset "$data/qmsum-lembed" --split test --index "$out/idx-qmsum-lembed" --out "$out/qmsum-lembed-test" \
        --configs "$configs" --cv-folds 5 --cv-group '^(.+)-[gs][0-9]+$' "${common[@]}"
}

for ds in ${DATASETS:-scifact nfcorpus qmsum qmsum-lembed}; do
    case $ds in
    scifact | nfcorpus) run "$ds" train test ;;
    qmsum) run qmsum train dev ;;
    qmsum-lembed) lembed ;;
    *) echo "unknown dataset $ds" >&2; exit 2 ;;
    esac
done
echo "runs in $out; choose with: python3 scripts/lexical-select.py $out/*-train/results.json"
