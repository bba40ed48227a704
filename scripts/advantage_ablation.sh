#!/usr/bin/env bash
# Advantage ablation (issue 33): the CPU learning check (scripts/learning_check.sh, TRAINER=trl) with GRPO's
# advantage as the only difference: group_norm (the adaptive group norm), std (TRL's default, GRPO), mean
# (TRL's scale_rewards=False, Dr. GRPO). Per seed the task, warm start and before-evaluation are made once
# (by the first variant) and copied, cache keys included, to the other variants; then each variant runs
# GRPO and the after-evaluation, at once alongside the first (PARALLEL=1) or after it. Seeds run in order,
# every variant of a seed before the next seed, so a stopped run leaves whole seeds. After each seed
# learning_check/ablation.py writes OUT/ablation.{md,json,png}. The figures do not depend on PARALLEL or the
# load (fixed threads and seeds; GRPO_MAX_SECONDS never binds); only the wall times do (CPU times hardly).
#
# Every knob is an env var (defaults in brackets); the rest go to scripts/learning_check.sh as they are:
#   OUT [runs/ablation]        OUT/<variant>/ is each variant's learning-check OUT
#   SEEDS ["1 2 3"]            seeds (model init, sampling, GRPO)
#   VARIANTS ["group_norm std mean"]  GRPO_ADVANTAGE values
#   GRPO_MAX_SECONDS [100000]  high: no run is re-planned or cut by the machine's load (every variant the same
#                              steps; learning_check/ablation.py checks the logs say so)
#   TIME_BUDGET [100000]       the learning check's kill limit for GRPO, as high
#   PARALLEL [1]               1 = the other variants' GRPO alongside the first's (3 processes of THREADS threads)
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
PARALLEL="${PARALLEL:-1}"
[[ -z ${GRPO_ADVANTAGE:-} && -z ${GRPO_SCALE_REWARDS:-} ]] || die 2 "GRPO_ADVANTAGE/GRPO_SCALE_REWARDS: set VARIANTS instead"
for v in $VARIANTS; do
  [[ $v == group_norm || $v == std || $v == mean ]] || die 2 "VARIANTS: '$v' is not group_norm, std or mean"
done
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
read -r -a variants <<<"$VARIANTS"
first="${variants[0]}"

# copy_warm_start VARIANT SEED: the first variant's task, data, warm start and before-evaluation, with their keys
copy_warm_start() {
  local V="$OUT/$1" S="$2" d
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
}
# run_variant VARIANT SEED: one learning check; true when its after-evaluation exists (rc 1 alone is a FAIL verdict)
run_variant() {
  local V="$OUT/$1" S="$2" rc=0
  say "seed $S, $1: start $(date -u +%H:%M:%S) UTC"
  rm -rf "${V:?}/seed$S/eval_after"
  OUT="$V" SEEDS="$S" GRPO_ADVANTAGE="$1" bash "$ROOT/scripts/learning_check.sh" >"$V/seed$S.log" 2>&1 || rc=$?
  say "seed $S, $1: end (rc $rc) $(date -u +%H:%M:%S) UTC"
  [[ -f $V/seed$S/eval_after/summary.json ]] || { err "seed $S, $1 failed (rc=$rc): see $V/seed$S.log"; return 1; }
}

for S in $SEEDS; do
  for v in "${variants[@]}"; do mkdir -p "$OUT/$v/seed$S"; done
  pids=()
  run_variant "$first" "$S" &
  pids+=($!)
  # the warm start and before-evaluation are ready (made or cached) once the learning check starts GRPO
  ready() { grep -q "seed $S: GRPO" "$OUT/$first/seed$S.log" 2>/dev/null; }
  while ! ready && kill -0 "${pids[0]}" 2>/dev/null; do sleep 10; done
  ready || { wait "${pids[0]}" || true; die 1 "seed $S: no warm start; see $OUT/$first/seed$S.log"; }
  [[ $PARALLEL == 1 ]] || { wait "${pids[0]}" || die 1 "seed $S, $first failed"; pids=(); }
  for v in "${variants[@]:1}"; do
    copy_warm_start "$v" "$S"
    if [[ $PARALLEL == 1 ]]; then run_variant "$v" "$S" & pids+=($!); else run_variant "$v" "$S" || die 1 "seed $S"; fi
  done
  failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  "$PYTHON" -m coderl.learning_check.ablation --out "$OUT" >/dev/null || log "ablation report failed (the runs are kept)"
  (( failed == 0 )) || die 1 "seed $S: a variant failed"
  say "seed $S: every variant done; $OUT/ablation.md"
done
