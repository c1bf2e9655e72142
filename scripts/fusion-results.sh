#!/usr/bin/env bash
# Fusion across kinds on every dataset of docs/results.md (docs/fusion.md,
# "Fusion across kinds"): the label-free candidates on every training split
# (scripts/fusion-procedures.py chooses the default from them by a procedure
# it tests leaving one dataset out), and leave one dataset out for the
# transfer: for each dataset, one fusion model fitted by msrag tune on the
# other datasets' training splits, evaluated on the left-out dataset's
# training splits and its reported split beside dense, lexical, the previous
# default and the default. A dataset is a corpus: QMSum's questions and its
# summaries as queries (one corpus, one index) are left out together, and
# LongEmbed QMSum, whose meetings are QMSum's, with them.
#
#   scripts/fusion-results.sh [MODEL [WINDOWS]]
#
# MODEL defaults to all-minilm-l6-v2-int8, WINDOWS to 64,128,254. Indices go
# to $OUT/idx-DATASET (built on first use by msrag eval, or reused: set
# IDX_DIR to a directory of indices named DATASET), training runs to
# $OUT/DATASET-SPLIT, fusion models to $OUT/transfer-without-DATASET.json (and
# transfer-all.json, fitted on every training split: the built-in transfer),
# runs of the left-out models on training splits to
# $OUT/DATASET-SPLIT-left-out and on reported splits to $OUT/DATASET-SPLIT.
# Then
#
#   python3 scripts/fusion-procedures.py scifact/SciFact=$OUT/scifact-train ...  # the default's procedure, left out
#   python3 scripts/fusion-summary.py RULE LABEL=RUN=MODEL ...                    # docs/results.md's tables
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

# QMSum's summaries as queries search QMSum's corpus: one index serves both.
index() { local d=$1; [[ $d == qmsum-summaries ]] && d=qmsum; if [[ -n ${IDX_DIR:-} ]]; then echo "$IDX_DIR/$d"; else echo "$out/idx-$d"; fi; }
split() { case $1 in qmsum) echo dev ;; qmsum-summaries) echo train ;; *) echo test ;; esac; }
trains=(scifact:train nfcorpus:train nfcorpus:dev qmsum:train qmsum-summaries:train)

for t in "${trains[@]}"; do
    ds=${t%%:*} s=${t##*:}
    [[ -f $out/$ds-$s/results.json ]] && continue
    "$bin" eval --dataset "$data/$ds" --split "$s" --index "$(index "$ds")" --out "$out/$ds-$s" --configs "$candidates" "${common[@]}"
done
# TRAIN_ONLY=1: only the training runs (another model's share of the choice).
[[ -n ${TRAIN_ONLY:-} ]] && exit 0

fit() { # name datasets...
    local name=$1 args=()
    shift
    [[ -f $out/transfer-$name.json ]] && return
    for d in "$@"; do args+=(--dataset "$data/$d" --index "$(index "$d")"); done
    "$bin" tune "${args[@]}" --split train --out "$out/transfer-$name.json" --loss-aversion "${LOSS_AVERSION:-0}" --quiet
}
fit all scifact nfcorpus qmsum qmsum-summaries
fit without-scifact nfcorpus qmsum qmsum-summaries
fit without-nfcorpus scifact qmsum qmsum-summaries
fit without-qmsum scifact nfcorpus

# The configurations every run of a fusion model reports beside it: every
# channel alone, dense and lexical RRF, the default and the one before it,
# full and the oracle.
reported="windows,rrf,rrf:windows=lexical,combsum:norm=zscore;windows=all,rrf:windows=all;weights=lexical:1.5;adapt=kind-top:1,full,oracle"
run() { # dataset split fusion-model run-name
    [[ -f $out/$4/results.json ]] && return
    "$bin" eval --dataset "$data/$1" --split "$2" --index "$(index "$1")" --out "$out/$4" \
        --configs "$reported" --fusion-model "$3" "${common[@]}"
}
without() { case $1 in qmsum-summaries | qmsum-lembed) echo without-qmsum ;; *) echo "without-$1" ;; esac; }
for t in "${trains[@]}"; do
    ds=${t%%:*} s=${t##*:}
    run "$ds" "$s" "$out/transfer-$(without "$ds").json" "$ds-$s-left-out"
done
for ds in scifact nfcorpus qmsum qmsum-lembed; do
    run "$ds" "$(split "$ds")" "$out/transfer-$(without "$ds").json" "$ds-$(split "$ds")"
    # The built-in transfer (transfer-all.json, for all-minilm-l6-v2-int8 at 64,128,254).
    if [[ $model == all-minilm-l6-v2-int8 && $windows == 64,128,254 ]]; then run "$ds" "$(split "$ds")" transfer "builtin-$ds-$(split "$ds")"; fi
done
echo "runs in $out"
