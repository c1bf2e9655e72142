#!/usr/bin/env bash
# Fusion across kinds on every dataset of docs/results.md (docs/fusion.md,
# "Fusion across kinds"): the label-free candidates on every training split
# (where the default is chosen, by its worst margin over the better kind),
# and leave one dataset out: for each dataset, one fusion model fitted by
# msrag tune on the other datasets' training splits, evaluated on the
# left-out dataset's reported split beside dense, lexical and every
# candidate. LongEmbed QMSum, whose meetings are QMSum's, is also left out
# with QMSum's questions (trained on the other three).
#
#   scripts/fusion-results.sh [MODEL [WINDOWS]]
#
# MODEL defaults to all-minilm-l6-v2-int8, WINDOWS to 64,128,254. Indices go
# to $OUT/idx-DATASET (built on first use by msrag eval, or reused: set
# IDX_DIR to a directory of indices named DATASET), training runs to
# $OUT/DATASET-train, fusion models to $OUT/transfer-without-DATASET.json,
# reported runs to $OUT/DATASET-SPLIT. Then
#
#   python3 scripts/fusion-select.py $OUT                  # the default, chosen on the training runs
#   python3 scripts/fusion-summary.py RULE LABEL=$OUT ...  # docs/results.md's tables
#
# LOSS_AVERSION=A fits the models with msrag tune --loss-aversion A (0 by
# default; give it its own OUT, since what is there is skipped, and link the
# training runs into it to reuse them). Rerunning skips what is there. Every
# step is a plain msrag command.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-all-minilm-l6-v2-int8}
windows=${2:-64,128,254}
# DATA: the data sets' folder; by default the cache's, which scripts/fetch-data.sh fills
# (QMSum's sets from the local mirror MSRAG_DATA_MIRROR names).
data=${DATA:-${MSRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/msrag}/data}
[[ -n ${DATA:-} ]] || scripts/fetch-data.sh scifact nfcorpus qmsum qmsum-summaries qmsum-lembed
out=${OUT:-out/fusion-$model}
bin=${MSRAG:-bin/msrag}
mkdir -p "$out"

# The label-free candidates, fixed before these runs: the rules of
# docs/results.md's lexical section, the kind features at three
# temperatures, and the batch's consensus at three powers.
B='combsum:norm=minmax;windows=all'
candidates="rrf:windows=dense,rrf:windows=lexical,$B,combsum:norm=zscore;windows=all,rrf:windows=all,$B;balance=kinds"
for f in kind-top kind-peak kind-agree; do for t in 0.1 0.3 1; do candidates="$candidates,$B;adapt=$f:$t"; done; done
for g in 1 2 4; do candidates="$candidates,$B;adapt=consensus:$g"; done
candidates="$candidates,rrf:windows=all;adapt=consensus:1,rrf:windows=all;adapt=consensus:2,$B;balance=kinds;adapt=consensus:1,$B;balance=kinds;adapt=consensus:2,combsum:norm=zscore;windows=all;adapt=consensus:1"
# A prior for the lexical kind (weights=lexical:W), alone and with the kind
# features at T = 1, over RRF, DocRRF and CombSUM: the candidates added when
# summaries as queries (qmsum-summaries) joined the training splits.
for w in 1.25 1.5 2; do
    for r in "rrf:windows=all" "combsum:norm=zscore;windows=all" "docrrf:windows=all" "$B" "rrf:windows=all;adapt=kind-peak:1" "rrf:windows=all;adapt=kind-top:1"; do
        candidates="$candidates,$r;weights=lexical:$w"
    done
done
candidates="$candidates,docrrf:windows=all"
# The lexical prior with the kind features at lower temperatures (a stronger
# per-query shift between kinds): the candidates added when the default,
# chosen on the training splits, still fell below lexical RRF on LongEmbed
# QMSum.
for w in 1.25 1.5 2; do for f in kind-top kind-peak; do for t in 0.3 0.5; do
    candidates="$candidates,rrf:windows=all;weights=lexical:$w;adapt=$f:$t"
done; done; done
common=(--model "$model" --windows "$windows" --quiet)

index() { if [[ -n ${IDX_DIR:-} ]]; then echo "$IDX_DIR/$1"; else echo "$out/idx-$1"; fi; }
split() { case $1 in qmsum) echo dev ;; qmsum-summaries) echo train ;; *) echo test ;; esac; }
trains=(scifact nfcorpus qmsum qmsum-summaries)

for ds in "${trains[@]}"; do
    [[ -f $out/$ds-train/results.json ]] && continue
    "$bin" eval --dataset "$data/$ds" --split train --index "$(index "$ds")" --out "$out/$ds-train" --configs "$candidates" "${common[@]}"
done
# TRAIN_ONLY=1: only the training runs (another model's share of the choice).
[[ -n ${TRAIN_ONLY:-} ]] && exit 0

tune_without() { # name datasets...
    local name=$1 args=()
    shift
    [[ -f $out/transfer-without-$name.json ]] && return
    for d in "$@"; do args+=(--dataset "$data/$d" --index "$(index "$d")"); done
    "$bin" tune "${args[@]}" --split train --out "$out/transfer-without-$name.json" --loss-aversion "${LOSS_AVERSION:-0}" --quiet
}
# LongEmbed QMSum's meetings are QMSum's train and val meetings: its model is
# fitted on every training split (msrag's built-in transfer), and once more
# without QMSum's questions, which are asked about the same meetings.
tune_without qmsum-lembed scifact nfcorpus qmsum qmsum-summaries
tune_without scifact nfcorpus qmsum qmsum-summaries
tune_without nfcorpus scifact qmsum qmsum-summaries
tune_without qmsum scifact nfcorpus qmsum-summaries
tune_without qmsum-summaries scifact nfcorpus qmsum
tune_without qmsum-lembed-and-qmsum scifact nfcorpus qmsum-summaries

report() { # dataset model-name run-name
    local ds=$1 s
    s=$(split "$ds")
    [[ -f $out/$3/results.json ]] && return
    "$bin" eval --dataset "$data/$ds" --split "$s" --index "$(index "$ds")" --out "$out/$3" \
        --configs "windows,rrf,hybrid,full,oracle,$candidates" --fusion-model "$out/transfer-without-$2.json" "${common[@]}"
}
for ds in scifact nfcorpus qmsum qmsum-lembed; do report "$ds" "$ds" "$ds-$(split "$ds")"; done
# qmsum-summaries has a training split only: left out, it is reported on it.
report qmsum-summaries qmsum-summaries qmsum-summaries-left-out
report qmsum-lembed qmsum-lembed-and-qmsum qmsum-lembed-test-without-qmsum
echo "runs in $out"
