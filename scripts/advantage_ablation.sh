#!/usr/bin/env bash
# Advantage ablation (issue 33): the CPU learning check (scripts/learning_check.sh, TRAINER=trl) with GRPO's
# advantage as the only difference: group_norm (the adaptive group norm), std (TRL's default, GRPO), mean
# (TRL's scale_rewards=False, Dr. GRPO). Per seed the task, warm start and before-evaluation are made once
# (by the first variant) and copied, cache keys included, to the other variants; then each variant runs
# GRPO and the after-evaluation. Seeds run in order, every variant of a seed before the next seed, so a
# stopped run leaves whole seeds. Then learning_check/ablation.py writes OUT/ablation.{md,json,png}.
#
# Every knob is an env var (defaults in brackets); the rest go to scripts/learning_check.sh as they are:
#   OUT [runs/ablation]        OUT/<variant>/ is each variant's learning-check OUT
#   SEEDS ["1 2 3"]            seeds (model init, sampling, GRPO)
#   VARIANTS ["group_norm std mean"]  GRPO_ADVANTAGE values
#   GRPO_MAX_SECONDS [100000]  high: no run is re-planned or cut by the machine's load (every variant the same
#                              steps; learning_check/ablation.py checks the logs say so)
#   TIME_BUDGET [100000]       the learning check's kill limit for GRPO, as high
#   PYTHON [python3]
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/common.sh
source "$ROOT/scripts/lib/common.sh"
LOG_TAG=ablation
OUT="${OUT:-runs/ablation}"
SEEDS="${SEEDS:-1 2 3}"
VARIANTS="${VARIANTS:-group_norm std mean}"
export GRPO_MAX_SECONDS="${GRPO_MAX_SECONDS:-100000}" TIME_BUDGET="${TIME_BUDGET:-100000}" TRAINER=trl
export PYTHON="${PYTHON:-python3}"
[[ -z ${GRPO_ADVANTAGE:-} && -z ${GRPO_SCALE_REWARDS:-} ]] || die 2 "GRPO_ADVANTAGE/GRPO_SCALE_REWARDS: set VARIANTS instead"
for v in $VARIANTS; do
  [[ $v == group_norm || $v == std || $v == mean ]] || die 2 "VARIANTS: '$v' is not group_norm, std or mean"
done
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
read -r -a variants <<<"$VARIANTS"
first="${variants[0]}"

for S in $SEEDS; do
  for v in "${variants[@]}"; do
    V="$OUT/$v"
    mkdir -p "$V/seed$S"
    if [[ $v != "$first" ]]; then  # the first variant's cached stages, keys and timings
      for d in task data; do
        [[ -d $OUT/$first/$d && ! -d $V/$d ]] && cp -r "$OUT/$first/$d" "$V/$d"
      done
      cp "$OUT/$first/data.key" "$OUT/$first/timings.jsonl" "$V/"
      for d in sft eval_before; do
        rm -rf "${V:?}/seed$S/$d"
        cp -r "$OUT/$first/seed$S/$d" "$V/seed$S/$d"
        cp "$OUT/$first/seed$S/$d.key" "$V/seed$S/"
      done
      grep -v '"stage": "\(grpo\|eval_after\)"' "$OUT/$first/seed$S/timings.jsonl" >"$V/seed$S/timings.jsonl" || true
    fi
    say "seed $S, $v: $(date -u +%H:%M:%S) UTC"
    rc=0
    rm -rf "${V:?}/seed$S/eval_after"
    OUT="$V" SEEDS="$S" GRPO_ADVANTAGE="$v" bash "$ROOT/scripts/learning_check.sh" >"$V/seed$S.log" 2>&1 || rc=$?
    # rc 1 with an after-evaluation is the learning check's FAIL verdict (a measured result), else a broken run
    [[ -f $V/seed$S/eval_after/summary.json ]] || die 1 "seed $S, $v failed (rc=$rc): see $V/seed$S.log"
    say "seed $S, $v: done (rc $rc) $(date -u +%H:%M:%S) UTC"
    "$PYTHON" -m coderl.learning_check.ablation --out "$OUT" || log "ablation report failed (the runs are kept)"
  done
done
