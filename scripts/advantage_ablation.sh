#!/usr/bin/env bash
# Advantage ablation (issue 33): the CPU learning check (scripts/learning_check.sh, TRAINER=trl) with GRPO's
# advantage as the only difference: group_norm (the adaptive group norm), std (TRL's default, GRPO), mean
# (TRL's scale_rewards=False, Dr. GRPO). Per seed the task, warm start and before-evaluation are made once
# (by the first variant) and copied, cache keys included, to the other variants; then each variant runs
# GRPO and the after-evaluation, after the first (PARALLEL=0) or alongside it (PARALLEL=1). A variant added
# later to an OUT that holds the seed (VARIANTS="group_norm@0.2") starts from that seed's warm start too.
# Seeds run in order, every variant of a seed before the next seed, so a stopped run leaves whole seeds. After
# each seed learning_check/ablation.py writes OUT/ablation.{md,json,png}. The figures do not depend on PARALLEL
# or the load (fixed threads and seeds; GRPO_MAX_SECONDS never binds); only the wall times do.
#
# Every knob is an env var (defaults in brackets); the rest go to scripts/learning_check.sh as they are:
#   OUT [runs/ablation]        OUT/<variant>/ is each variant's learning-check OUT
#   SEEDS ["1 2 3"]            seeds (model init, sampling, GRPO)
#   VARIANTS ["group_norm std mean"]  GRPO_ADVANTAGE values, or group_norm@T: the adaptive group norm with
#                              GRPO_STD_THRESHOLD=T (group_norm alone: the learning check's 0.1), e.g.
#                              VARIANTS="group_norm@0.05 group_norm@0.2" for the threshold beside group_norm
#   GRPO_STEPS [130]           GRPO's steps per run, as the figures in docs/performance.md were measured
#   GRPO_MAX_SECONDS [100000]  high: no run is re-planned or cut by the machine's load (every variant the same
#                              steps; learning_check/ablation.py checks the logs say so)
#   TIME_BUDGET [100000]       the learning check's kill limit for GRPO, as high
#   PARALLEL [0]               1 = the other variants' GRPO alongside the first's (3 processes of THREADS threads:
#                              only faster with 3 x THREADS idle cores; on fewer the threads just share them)
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
export GRPO_STEPS="${GRPO_STEPS:-130}" GRPO_MAX_SECONDS="${GRPO_MAX_SECONDS:-100000}" TIME_BUDGET="${TIME_BUDGET:-100000}" TRAINER=trl
export PYTHON="${PYTHON:-python3}"
PARALLEL="${PARALLEL:-0}"
[[ -z ${GRPO_ADVANTAGE:-} && -z ${GRPO_SCALE_REWARDS:-} && -z ${GRPO_STD_THRESHOLD:-} ]] ||
  die 2 "GRPO_ADVANTAGE/GRPO_SCALE_REWARDS/GRPO_STD_THRESHOLD: set VARIANTS instead"
for v in $VARIANTS; do
  [[ $v == group_norm || $v == std || $v == mean || $v =~ ^group_norm@([0-9]+(\.[0-9]+)?|\.[0-9]+)$ ]] ||
    die 2 "VARIANTS: '$v' is not group_norm, std, mean or group_norm@THRESHOLD (e.g. group_norm@0.2)"
done
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
read -r -a variants <<<"$VARIANTS"
first="${variants[0]}"

# copy_warm_start FROM TO SEED: variant FROM's task, data, warm start and before-evaluation, with their keys, to TO
copy_warm_start() {
  local F="$OUT/$1" V="$OUT/$2" S="$3" d
  for d in task data; do
    [[ -d $F/$d && ! -d $V/$d ]] && cp -r "$F/$d" "$V/$d"
  done
  cp "$F/data.key" "$F/timings.jsonl" "$V/"
  for d in sft eval_before; do
    rm -rf "${V:?}/seed$S/$d"
    cp -r "$F/seed$S/$d" "$V/seed$S/$d"
    cp "$F/seed$S/$d.key" "$V/seed$S/"
  done
  grep -v '"stage": "\(grpo\|eval_after\)"' "$F/seed$S/timings.jsonl" >"$V/seed$S/timings.jsonl" || true
}
# made_before SEED: a variant of an earlier run into OUT that holds seed SEED's before-evaluation (and so its warm
# start): the first variant starts from it, so a variant added later (a threshold) reuses the seed's warm start
made_before() {
  local d
  for d in "$OUT"/*/; do
    [[ -f ${d}seed$1/eval_before.key && -f ${d}data.key ]] && { basename "$d"; return 0; }
  done
  return 1
}
# run_variant VARIANT SEED: one learning check; true when its after-evaluation exists (rc 1 alone is a FAIL verdict)
run_variant() {
  local V="$OUT/$1" S="$2" rc=0
  say "seed $S, $1: start $(date -u +%H:%M:%S) UTC"
  rm -rf "${V:?}/seed$S/eval_after"
  local knobs=(GRPO_ADVANTAGE="${1%%@*}")
  [[ $1 == *@* ]] && knobs+=(GRPO_STD_THRESHOLD="${1#*@}")
  env OUT="$V" SEEDS="$S" "${knobs[@]}" bash "$ROOT/scripts/learning_check.sh" >"$V/seed$S.log" 2>&1 || rc=$?
  say "seed $S, $1: end (rc $rc) $(date -u +%H:%M:%S) UTC"
  [[ -f $V/seed$S/eval_after/summary.json ]] || { err "seed $S, $1 failed (rc=$rc): see $V/seed$S.log"; return 1; }
}

for S in $SEEDS; do
  for v in "${variants[@]}"; do mkdir -p "$OUT/$v/seed$S"; done
  if [[ ! -f $OUT/$first/seed$S/eval_before.key ]] && src="$(made_before "$S")"; then
    copy_warm_start "$src" "$first" "$S"
  fi
  pids=()
  run_variant "$first" "$S" &
  pids+=($!)
  # the warm start and before-evaluation are ready (made or cached) once the learning check starts GRPO
  ready() { grep -q "seed $S: GRPO" "$OUT/$first/seed$S.log" 2>/dev/null; }
  while ! ready && kill -0 "${pids[0]}" 2>/dev/null; do sleep 10; done
  ready || { wait "${pids[0]}" || true; die 1 "seed $S: no warm start; see $OUT/$first/seed$S.log"; }
  [[ $PARALLEL == 1 ]] || { wait "${pids[0]}" || die 1 "seed $S, $first failed"; pids=(); }
  for v in "${variants[@]:1}"; do
    copy_warm_start "$first" "$v" "$S"
    if [[ $PARALLEL == 1 ]]; then run_variant "$v" "$S" & pids+=($!); else run_variant "$v" "$S" || die 1 "seed $S"; fi
  done
  failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  "$PYTHON" -m coderl.learning_check.ablation --out "$OUT" >/dev/null || log "ablation report failed (the runs are kept)"
  (( failed == 0 )) || die 1 "seed $S: a variant failed"
  say "seed $S: every variant done; $OUT/ablation.md"
done
