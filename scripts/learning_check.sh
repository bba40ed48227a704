#!/usr/bin/env bash
# The GRPO learning check (issues 14, 23): does the whole loop improve a policy? Per seed:
#   synthetic task -> data/preprocess.py -> warm start (tokenizer + small Qwen2 model + SFT) -> held-out
#   pass@k -> GRPO with our reward -> held-out pass@k again,
# then a report: OUT/report/{curves.png,report.md,report.json} with a PASS/FAIL line (exit 0 / 1).
# GRPO runs in one of two trainers:
#   openrlhf  one GPU: scripts/train_grpo_7b_zero2.sh (OpenRLHF 0.5.7 + patches/, adaptive group norm)
#             against our reward server
#   trl       CPU: TRL's GRPOTrainer (learning_check/trl_grpo.py) with rewards/integrations/trl.py over an
#             in-process sandbox pool; TRL's group norm has no low-std fallback (the report says so)
# The task, warm start and before-evaluation are cached in OUT (keyed by their knobs): a rerun with other
# GRPO knobs redoes only GRPO and the after-evaluation.
#
# Every knob is an env var (defaults in brackets; "trl|openrlhf" = the default of each trainer):
#   TRAINER [auto]             trl, openrlhf, or auto (openrlhf when a GPU is visible, else trl)
#   OUT [runs/learning_check]  output dir: task/, data/, seed<S>/{sft,eval_before,grpo,eval_after}, report/
#   SEEDS ["1 2"|"1"]          space-separated seeds, one full run each (model init, sampling, GRPO)
#   TASK_SEED [0]              seed of the synthetic problems and their train/held-out split
#   DIFFICULTY [3]             most steps per problem (data/synthetic, 2..6)
#   N_TRAIN [4000]  N_HELDOUT [200]   problems
#   TRAIN_ROWS [all]           only the first N train problems are the warm start's and GRPO's (and the server's)
#   VERIFY [1]                 1 = preprocess --verify (runs every reference solution in the sandbox)
#   MODEL_SHAPE [small]        learning_check/model.py SHAPES: nano (tests), tiny (~0.9M), small (~3M), base (~11M)
#   VOCAB_SIZE [1024]          BPE vocab fitted to the train text
#   SFT_STEPS [400|300]  SFT_BATCH [32]  SFT_LR [3e-3]   the warm start (docs/learning_check.md)
#   SFT_GROUP [1]              batches drawn together and split by length (less padding, a weaker warm start)
#   SFT_NOISE [0.6|0]          share of warm-start targets that are near misses of the reference
#                              (learning_check/near_miss.py: an imperfect demonstrator, as a pretrained model is)
#   EVAL_N [8]  EVAL_K [1,8]  EVAL_MAX_NEW_TOKENS [96|128]  EVAL_BATCH [256]  EVAL_TEMPERATURE [1.0]
#   GRPO_STEPS [180|30]        optimizer steps (openrlhf: rollouts; MAX_SAMPLES = GRPO_STEPS x GRPO_PROMPTS)
#   GRPO_PROMPTS [8|32]  GRPO_N_SAMPLES [8]   prompts per rollout, completions per prompt
#   GRPO_GEN_LEN [96|128]  GRPO_PROMPT_LEN [320]  GRPO_LR [2e-4|5e-5]  GRPO_KL [0.01|0.001]
#   GRPO_TEMPERATURE [1.0]
#   TRL only:
#   GRPO_ITERATIONS [1]        optimizer steps per generated batch (TRL's num_iterations; divides GRPO_STEPS)
#   GRPO_LR_SCHEDULER [cosine]  GRPO_WARMUP_RATIO [0.05]  GRPO_LOSS_TYPE [bnpo]
#   GRPO_ADVANTAGE [std]       group_norm (the adaptive group norm: a group whose reward std is below
#                              GRPO_STD_THRESHOLD [0.1] is only centred), std (TRL's default, GRPO) or mean (Dr. GRPO);
#                              docs/performance.md "Advantage ablation" (GRPO_SCALE_REWARDS=1/0: std/mean, as before)
#   GRPO_REWARD []             space-separated FIELD=VALUE of the reward config (configs/reward.yaml's reward:),
#                              e.g. "format_weight=0 syntax_weight=0 length_weight=0"
#   SEED_SECONDS [1800|0]      wall-clock budget of a seed, end to end (0 = none): GRPO gets what the shared
#                              stages, the warm start and the before-evaluation left of it (their recorded times,
#                              cached or not), less as long again as the before-evaluation for the after one and
#                              60 s, as GRPO_MAX_SECONDS (at most 90 % of TIME_BUDGET)
#   GRPO_MAX_SECONDS [from SEED_SECONDS|0]
#                              fit GRPO into this many seconds (a seed took 22-36 min on 2 cores, by host): where
#                              the steps timed show that fewer steps fit, the lr schedule ends at the last that
#                              fits and GRPO stops there (or after the step that passes it), keeping that model
#                              (0 = off: every step runs; with it, only a run whose steps all fit gives the same
#                              numbers whatever the load; TIME_BUDGET still kills a run that overstays)
#   THREADS [2]                torch threads of every CPU stage (fixed: the numbers depend on it)
#   OpenRLHF only:
#   GRPO_TRAIN_BATCH [128]  GRPO_MICRO_TRAIN_BATCH [64]  GRPO_MICRO_ROLLOUT_BATCH [256]
#   GRPO_EXTRA_ARGS []         appended to the launch script's EXTRA_ARGS
#   PORT []                    reward server port; empty = a free one; a given port in use fails at once
#   GPUS [1]
#   TIME_BUDGET [1200|360]     seconds the GRPO stage may take per seed (killed after; the check then FAILs)
#   CACHE [1]                  0 = redo the cached stages (task, warm start, before-evaluation)
#   TARGET_POINTS [10|15]  PYTHON [python3]  DEVICE [auto]
#   DRY_RUN [0]                1 = tiny sizes, every CPU stage for real, no verdict (exit 0): with openrlhf
#                              the GRPO command is printed by the launch script's own DRY_RUN and the report
#                              drawn from a stand-in log; with trl a few real GRPO steps of a nano model warm-
#                              started on the 4 problems GRPO draws from (TRAIN_ROWS), and the dry run FAILs
#                              (exit 1) when no sample's reward reaching the trainer was non-zero; 1 thread (a
#                              nano model gains nothing from 2)
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=learning_check
PYTHON="${PYTHON:-python3}"
TRAINER="${TRAINER:-auto}"
if [[ $TRAINER == auto ]]; then
  if nvidia-smi -L >/dev/null 2>&1; then TRAINER=openrlhf; else TRAINER=trl; fi
fi
[[ $TRAINER == trl || $TRAINER == openrlhf ]] || die 2 "TRAINER must be trl, openrlhf or auto (got '$TRAINER')"
DRY_RUN="${DRY_RUN:-0}"
# dflt TRL OPENRLHF DRY: the default of this trainer, or DRY under DRY_RUN=1
dflt() {
  if [[ $DRY_RUN == 1 ]]; then printf '%s\n' "$3"
  elif [[ $TRAINER == trl ]]; then printf '%s\n' "$1"
  else printf '%s\n' "$2"; fi
}
# gdflt TRL OPENRLHF TRL_DRY: GRPO's defaults; DRY_RUN=1 shrinks only TRL's, as OpenRLHF's are only printed
gdflt() { if [[ $DRY_RUN == 1 && $TRAINER == trl ]]; then printf '%s\n' "$3"; else DRY_RUN=0 dflt "$1" "$2" ""; fi; }
OUT="${OUT:-runs/learning_check}"
SEEDS="${SEEDS:-$(dflt "1 2" 1 1)}"
TASK_SEED="${TASK_SEED:-0}"
DIFFICULTY="${DIFFICULTY:-3}"
N_TRAIN="${N_TRAIN:-$(dflt 4000 4000 60)}"
N_HELDOUT="${N_HELDOUT:-$(dflt 200 200 6)}"
TRAIN_ROWS="${TRAIN_ROWS:-$(dflt "" "" 4)}"
VERIFY="${VERIFY:-1}"
MODEL_SHAPE="${MODEL_SHAPE:-$(dflt small small nano)}"
VOCAB_SIZE="${VOCAB_SIZE:-$(dflt 1024 1024 400)}"
SFT_STEPS="${SFT_STEPS:-$(dflt 400 300 80)}"
SFT_BATCH="${SFT_BATCH:-$(dflt 32 32 4)}"
SFT_LR="${SFT_LR:-$(dflt 3e-3 3e-3 3e-2)}"
SFT_NOISE="${SFT_NOISE:-$(dflt 0.6 0 0.6)}"
SFT_GROUP="${SFT_GROUP:-1}"
EVAL_N="${EVAL_N:-$(dflt 8 8 2)}"
EVAL_K="${EVAL_K:-$(dflt 1,8 1,8 1,2)}"
EVAL_MAX_NEW_TOKENS="${EVAL_MAX_NEW_TOKENS:-$(dflt 96 128 8)}"
EVAL_BATCH="${EVAL_BATCH:-$(dflt 256 256 16)}"
EVAL_TEMPERATURE="${EVAL_TEMPERATURE:-1.0}"
GRPO_STEPS="${GRPO_STEPS:-$(gdflt 180 30 2)}"
GRPO_PROMPTS="${GRPO_PROMPTS:-$(gdflt 8 32 2)}"
GRPO_N_SAMPLES="${GRPO_N_SAMPLES:-$(gdflt 8 8 4)}"
GRPO_GEN_LEN="${GRPO_GEN_LEN:-$(gdflt 96 128 64)}"
GRPO_PROMPT_LEN="${GRPO_PROMPT_LEN:-320}"
GRPO_LR="${GRPO_LR:-$(gdflt 2e-4 5e-5 2e-4)}"
GRPO_KL="${GRPO_KL:-$(gdflt 0.01 0.001 0.005)}"
GRPO_TEMPERATURE="${GRPO_TEMPERATURE:-1.0}"
GRPO_ITERATIONS="${GRPO_ITERATIONS:-$(dflt 1 1 1)}"
GRPO_LR_SCHEDULER="${GRPO_LR_SCHEDULER:-cosine}"
GRPO_WARMUP_RATIO="${GRPO_WARMUP_RATIO:-0.05}"
if [[ -z ${GRPO_ADVANTAGE:-} && -n ${GRPO_SCALE_REWARDS:-} ]]; then
  [[ $GRPO_SCALE_REWARDS == 0 ]] && GRPO_ADVANTAGE=mean || GRPO_ADVANTAGE=std
fi
GRPO_ADVANTAGE="${GRPO_ADVANTAGE:-std}"
GRPO_STD_THRESHOLD="${GRPO_STD_THRESHOLD:-0.1}"
GRPO_LOSS_TYPE="${GRPO_LOSS_TYPE:-bnpo}"
GRPO_REWARD="${GRPO_REWARD:-}"
SEED_SECONDS="${SEED_SECONDS:-$(gdflt 1800 0 0)}"
GRPO_MAX_SECONDS="${GRPO_MAX_SECONDS:-}"
SEED_MARGIN=60
THREADS="${THREADS:-$(dflt 2 2 1)}"
GRPO_TRAIN_BATCH="${GRPO_TRAIN_BATCH:-128}"
GRPO_MICRO_TRAIN_BATCH="${GRPO_MICRO_TRAIN_BATCH:-64}"
GRPO_MICRO_ROLLOUT_BATCH="${GRPO_MICRO_ROLLOUT_BATCH:-256}"
GRPO_EXTRA_ARGS="${GRPO_EXTRA_ARGS:-}"
PORT="${PORT:-}"
GPUS="${GPUS:-1}"
TIME_BUDGET="${TIME_BUDGET:-$(dflt 1200 360 360)}"
CACHE="${CACHE:-1}"
TARGET_POINTS="${TARGET_POINTS:-$(dflt 10 15 10)}"
DEVICE="${DEVICE:-auto}"
whole_numbers N_TRAIN N_HELDOUT TRAIN_ROWS SFT_STEPS SFT_GROUP GRPO_STEPS GRPO_ITERATIONS THREADS TIME_BUDGET PORT \
  GRPO_MAX_SECONDS SEED_SECONDS
(( SFT_GROUP >= 1 )) || die 2 "SFT_GROUP must be at least 1 (got $SFT_GROUP)"
(( GRPO_STEPS % GRPO_ITERATIONS == 0 )) || die 2 "GRPO_STEPS=$GRPO_STEPS is not a multiple of GRPO_ITERATIONS=$GRPO_ITERATIONS"

coderl_importable "$PYTHON" || die 2 "PYTHON=$PYTHON cannot import coderl (pip install -e .)"
need=(torch transformers tokenizers matplotlib)
[[ $TRAINER == trl ]] && need+=(trl datasets)
missing="$(missing_modules "$PYTHON" "${need[@]}")"
[[ -z $missing ]] || die 2 "PYTHON=$PYTHON cannot import $missing (even DRY_RUN=1 trains a tiny model): bash \
scripts/test.sh --install-only installs them into .venv (CPU torch + coderl's extras; no tests run), then \
PYTHON=.venv/bin/python"
if [[ $TRAINER == openrlhf ]]; then  # checked before any stage runs
  # The server must be ours: a port already taken (say by another check) would leave our server dead and the
  # health poll answered by the other one.
  port_free() { "$PYTHON" -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)' "$1"; }
  if [[ -z $PORT ]]; then
    PORT="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  else
    port_free "$PORT" || die 2 "PORT=$PORT is in use by another process; free it, or leave PORT empty to pick a free one"
  fi
fi
export OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
t0=$SECONDS
stage() { echo "=== [learning_check $((SECONDS - t0))s] $*"; }
# timed FILE NAME CMD...: run CMD; append its wall time, the CPU time of its processes and the machine's load to
# FILE (JSON lines), keeping CMD's exit status (a caller's `|| rc=$?` must see the stage fail). CPU time is what
# the shell's reaped children used (/proc/$$/stat cutime + cstime): unlike wall time, other users' load does not
# inflate it.
CLK_TCK="$(getconf CLK_TCK)"
children_cpu() { awk -v t="$CLK_TCK" '{printf "%.1f", ($16 + $17) / t}' "/proc/$$/stat"; }
timed() {
  local file="$1" name="$2" s=$SECONDS rc=0 c0
  shift 2
  c0="$(children_cpu)"
  "$@" || rc=$?
  printf '{"stage": "%s", "seconds": %d, "cpu_seconds": %s, "load1": %s}\n' "$name" "$((SECONDS - s))" \
    "$(awk -v a="$c0" -v b="$(children_cpu)" 'BEGIN {printf "%.1f", b - a}')" "$(cut -d' ' -f1 /proc/loadavg)" >>"$file"
  return "$rc"
}
# cached DIR KEY: DIR was made by a finished stage run with these same knobs (and CACHE=1)
cached() { [[ $CACHE == 1 && -f $1.key && $(cat "$1.key") == "$2" ]]; }
done_key() { printf '%s\n' "$2" >"$1.key"; }

TASK_KEY="trainer=$TRAINER difficulty=$DIFFICULTY n=$N_TRAIN/$N_HELDOUT seed=$TASK_SEED verify=$VERIFY"
TRAIN="$OUT/data/train/train.jsonl" HELDOUT="$OUT/data/heldout/test.jsonl" TRAIN_TRL="$OUT/data/train_trl/train.jsonl"
if cached "$OUT/data" "$TASK_KEY"; then
  stage "task and data: cached ($TASK_KEY)"
else
  rm -f "$OUT/data.key" "$OUT/timings.jsonl"
  stage "task (difficulty $DIFFICULTY, $N_TRAIN train / $N_HELDOUT held-out, seed $TASK_SEED)"
  timed "$OUT/timings.jsonl" task "$PYTHON" -m coderl.data.synthetic.make_task --out_dir "$OUT/task" \
    --n_train "$N_TRAIN" --n_heldout "$N_HELDOUT" --difficulty "$DIFFICULTY" --seed "$TASK_SEED"
  pp=(--format mbpp --keep_reference --answer_format code_block --system_prompt code_block --source synthetic
      --no_progress)
  [[ $VERIFY == 1 ]] && pp+=(--verify)
  # shellcheck disable=SC2329  # called through timed
  preprocess() {  # split dir, out dir, test ratio, extra args
    "$PYTHON" "$ROOT/data/preprocess.py" --input_dir "$OUT/task/$1" --output_dir "$OUT/data/$2" --test_ratio "$3" \
      "${pp[@]}" "${@:4}" | tail -3
  }
  stage "preprocess"
  timed "$OUT/timings.jsonl" preprocess preprocess train train 0
  [[ $TRAINER == trl ]] && timed "$OUT/timings.jsonl" preprocess_trl preprocess train train_trl 0 --output_format trl
  timed "$OUT/timings.jsonl" preprocess_heldout preprocess heldout heldout 1
  done_key "$OUT/data" "$TASK_KEY"
fi
if [[ -n $TRAIN_ROWS ]]; then
  # first_rows SRC: SRC's first TRAIN_ROWS rows as OUT/data/<split>_first<N>/train.jsonl (printed)
  first_rows() {
    local n dst
    n="$(wc -l <"$1")"
    (( TRAIN_ROWS >= 1 && TRAIN_ROWS <= n )) || die 2 "TRAIN_ROWS=$TRAIN_ROWS: $1 has $n rows"
    dst="$OUT/data/$(basename "$(dirname "$1")")_first$TRAIN_ROWS/train.jsonl"
    mkdir -p "$(dirname "$dst")"
    head -n "$TRAIN_ROWS" "$1" >"$dst.tmp" && mv "$dst.tmp" "$dst"
    printf '%s\n' "$dst"
  }
  TRAIN="$(first_rows "$TRAIN")"
  [[ $TRAINER == trl ]] && TRAIN_TRL="$(first_rows "$TRAIN_TRL")"
  stage "warm start and GRPO on the first $TRAIN_ROWS train problems (TRAIN_ROWS)"
fi

if [[ $TRAINER == openrlhf ]]; then
  stage "reward server on port $PORT"
  "$PYTHON" "$ROOT/rewards/reward_server.py" --data_path "$TRAIN" --port "$PORT" >"$OUT/server.log" 2>&1 &
  SRV=$!
  trap 'kill "$SRV" 2>/dev/null || true' EXIT
  for _ in $(seq 120); do
    kill -0 "$SRV" 2>/dev/null || die 1 "reward server exited; see $OUT/server.log: $(tail -1 "$OUT/server.log")"
    "$PYTHON" - "$PORT" "$TRAIN" <<'PY' && break
import json, sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=1) as r:
        sys.exit(0 if json.load(r)["dataset"]["path"] == sys.argv[2] else 1)
except (OSError, ValueError, KeyError):
    sys.exit(1)
PY
    sleep 1
  done
  kill -0 "$SRV" 2>/dev/null || die 1 "reward server exited; see $OUT/server.log: $(tail -1 "$OUT/server.log")"
fi

# shellcheck disable=SC2329  # called through timed
evaluate() {  # model dir, out dir, seed
  (cd "$ROOT" && "$PYTHON" -m coderl.rewards.evaluation.cli --data "$HELDOUT" --model "$1" --out "$2" --n "$EVAL_N" \
    --k "$EVAL_K" --temperature "$EVAL_TEMPERATURE" --max_new_tokens "$EVAL_MAX_NEW_TOKENS" --batch_size "$EVAL_BATCH" \
    --seed "$3" --backend hf --no_progress)
}

runs=()
for S in $SEEDS; do
  R="$OUT/seed$S"
  T="$R/timings.jsonl"
  mkdir -p "$R"
  runs+=(--run "seed$S=$R")
  SFT_KEY="$TASK_KEY shape=$MODEL_SHAPE vocab=$VOCAB_SIZE steps=$SFT_STEPS batch=$SFT_BATCH lr=$SFT_LR seed=$S"
  SFT_KEY+=" noise=$SFT_NOISE group=$SFT_GROUP"
  [[ -n $TRAIN_ROWS ]] && SFT_KEY+=" rows=$TRAIN_ROWS"
  SFT_KEY+=" threads=$THREADS device=$DEVICE"
  EVAL_KEY="$SFT_KEY eval=$EVAL_N/$EVAL_K/$EVAL_MAX_NEW_TOKENS/$EVAL_BATCH/$EVAL_TEMPERATURE"
  if cached "$R/sft" "$SFT_KEY"; then
    stage "seed $S: warm start: cached"
  else
    rm -f "$R/sft.key" "$R/eval_before.key" "$T"
    stage "seed $S: warm start ($MODEL_SHAPE, $SFT_STEPS steps)"
    timed "$T" warm_start "$PYTHON" -m coderl.learning_check.warm_start --train "$TRAIN" --out_dir "$R/sft" \
      --shape "$MODEL_SHAPE" --vocab_size "$VOCAB_SIZE" --steps "$SFT_STEPS" --batch_size "$SFT_BATCH" --lr "$SFT_LR" \
      --noise "$SFT_NOISE" --group_batches "$SFT_GROUP" --seed "$S" --device "$DEVICE" --threads "$THREADS"
    done_key "$R/sft" "$SFT_KEY"
  fi
  if cached "$R/eval_before" "$EVAL_KEY"; then
    stage "seed $S: held-out pass@k before GRPO: cached"
  else
    stage "seed $S: held-out pass@k before GRPO"
    timed "$T" eval_before evaluate "$R/sft" "$R/eval_before" "$S"
    done_key "$R/eval_before" "$EVAL_KEY"
  fi
  # GRPO and the after-evaluation are never cached: their knobs are what a rerun changes
  sed -i '/"stage": "\(grpo\|eval_after\)"/d' "$T" 2>/dev/null || true
  stage "seed $S: GRPO ($TRAINER), $GRPO_STEPS steps of $GRPO_PROMPTS prompts x $GRPO_N_SAMPLES samples"
  rm -rf "$R/grpo"
  max_seconds=${GRPO_MAX_SECONDS:-0}
  if [[ -z $GRPO_MAX_SECONDS ]] && (( SEED_SECONDS > 0 )); then
    spent=$("$PYTHON" - "$OUT/timings.jsonl" "$T" <<'PY'
import sys
from pathlib import Path
from coderl.learning_check.report import read_timings
shared, seed = (read_timings(Path(p)) for p in sys.argv[1:])
before = sum(r["seconds"] for r in seed if r["stage"] == "eval_before")
print(round(sum(r["seconds"] for r in shared) + sum(r["seconds"] for r in seed if r["stage"] == "warm_start")
            + 2 * before))
PY
)
    # GRPO's own load and save fall outside its time limit, and an after-evaluation may take longer than the before one
    max_seconds=$(( SEED_SECONDS - spent - SEED_MARGIN ))
    (( max_seconds > TIME_BUDGET * 9 / 10 )) && max_seconds=$(( TIME_BUDGET * 9 / 10 ))
    (( max_seconds < 1 )) && max_seconds=1
    stage "seed $S: GRPO gets $max_seconds s: SEED_SECONDS=$SEED_SECONDS less $spent s for the other stages and $SEED_MARGIN s"
  fi
  if [[ $TRAINER == trl ]]; then
    rc=0
    reward_args=()
    for kv in $GRPO_REWARD; do reward_args+=(--reward "$kv"); done
    # the dry run's point: a reward the sandbox gave the model's own sample reached the trainer
    [[ $DRY_RUN == 1 ]] && reward_args+=(--require_reward)
    timed "$T" grpo timeout "$TIME_BUDGET" "$PYTHON" -m coderl.learning_check.trl_grpo --model "$R/sft" \
      --train "$TRAIN_TRL" --out_dir "$R/grpo" --steps "$GRPO_STEPS" --prompts "$GRPO_PROMPTS" \
      --generations "$GRPO_N_SAMPLES" --num_iterations "$GRPO_ITERATIONS" --max_new_tokens "$GRPO_GEN_LEN" \
      --max_prompt_len "$GRPO_PROMPT_LEN" --lr "$GRPO_LR" --lr_scheduler "$GRPO_LR_SCHEDULER" \
      --warmup_ratio "$GRPO_WARMUP_RATIO" --beta "$GRPO_KL" --loss_type "$GRPO_LOSS_TYPE" \
      --advantage "$GRPO_ADVANTAGE" --group_norm_std_threshold "$GRPO_STD_THRESHOLD" --temperature "$GRPO_TEMPERATURE" --seed "$S" --threads "$THREADS" \
      --max_seconds "$max_seconds" "${reward_args[@]}" >"$R/grpo.log" 2>&1 || rc=$?
    grep -a "^{'loss'" "$R/grpo.log" | tail -1 || true
    grep -a "^GRPO reward reaching the trainer" "$R/grpo.log" || true
    if [[ $rc == 3 ]]; then
      tail -5 "$R/grpo.log"
      die 1 "DRY_RUN=1: every reward reaching the trainer for seed $S was 0 (no sample held code the reward could \
credit): the loop ran, but no reward signal was exercised; see $R/grpo/rewards.jsonl"
    fi
    if [[ $rc != 0 || ! -f $R/grpo/model/config.json ]]; then
      tail -40 "$R/grpo.log"
      die 1 "GRPO for seed $S failed (rc=$rc, 124 = over TIME_BUDGET=$TIME_BUDGET s); see $R/grpo.log"
    fi
  else
    grpo_env=(MODEL="$R/sft" DATA="$TRAIN" REWARD_URL="http://127.0.0.1:$PORT/get_reward" GPUS="$GPUS"
      SAVE_DIR="$R/grpo" RUN_NAME="seed$S" TENSORBOARD=1 WANDB=0 SEED="$S"
      N_SAMPLES="$GRPO_N_SAMPLES" ROLLOUT_BATCH_SIZE="$GRPO_PROMPTS"
      MICRO_ROLLOUT_BATCH_SIZE="$GRPO_MICRO_ROLLOUT_BATCH" TRAIN_BATCH_SIZE="$GRPO_TRAIN_BATCH"
      MICRO_TRAIN_BATCH_SIZE="$GRPO_MICRO_TRAIN_BATCH" GENERATE_MAX_LEN="$GRPO_GEN_LEN"
      PROMPT_MAX_LEN="$GRPO_PROMPT_LEN" MAX_SAMPLES="$((GRPO_STEPS * GRPO_PROMPTS))" NUM_EPISODES=1
      MAX_EPOCHS=1 ACTOR_LR="$GRPO_LR" INIT_KL_COEF="$GRPO_KL" TEMPERATURE="$GRPO_TEMPERATURE"
      LR_WARMUP_RATIO=0 GRADIENT_CHECKPOINTING=0 SAVE_STEPS=100000 LOGGING_STEPS=1 TRAIN_PYTHON="$PYTHON"
      EXTRA_ARGS="$GRPO_EXTRA_ARGS" PREFLIGHT_SKIP=memory DRY_RUN="$DRY_RUN")
    if [[ $DRY_RUN == 1 ]]; then
      # No GPU: the launch script prints its command and checks what it can; the after-model is the
      # warm start itself and the curves come from a stand-in log (the report gives no verdict).
      env "${grpo_env[@]}" PREFLIGHT_SKIP=memory,openrlhf,gpus bash "$ROOT/scripts/train_grpo_7b_zero2.sh"
      "$PYTHON" -m coderl.learning_check.dry_run "$R/grpo/tensorboard"
      mkdir -p "$R/grpo" && cp -r "$R/sft" "$R/grpo/model"
    else
      rc=0
      timed "$T" grpo env -C "$ROOT" "${grpo_env[@]}" timeout "$TIME_BUDGET" bash scripts/train_grpo_7b_zero2.sh \
        >"$R/grpo.log" 2>&1 || rc=$?
      grep -a "Episode \[" "$R/grpo.log" | tail -1 || true
      if [[ $rc != 0 || ! -f $R/grpo/model/config.json ]]; then
        tail -60 "$R/grpo.log"
        die 1 "GRPO for seed $S failed (rc=$rc, 124 = over TIME_BUDGET=$TIME_BUDGET s); see $R/grpo.log"
      fi
    fi
  fi
  stage "seed $S: held-out pass@k after GRPO"
  timed "$T" eval_after evaluate "$R/grpo/model" "$R/eval_after" "$S"
done

stage "report"
rep=(--out "$OUT/report" --target_points "$TARGET_POINTS" --trainer "$TRAINER" --shared_timings "$OUT/timings.jsonl")
if [[ $DRY_RUN == 1 && $TRAINER == openrlhf ]]; then
  rep+=(--no_verdict "DRY_RUN=1: the GRPO curves are a stand-in log and the after-model is the warm start")
elif [[ $DRY_RUN == 1 ]]; then
  rep+=(--no_verdict "DRY_RUN=1: a tiny model, a few GRPO steps: the loop ran, nothing is measured")
fi
rc=0
"$PYTHON" -m coderl.learning_check.report "${runs[@]}" "${rep[@]}" || rc=$?
stage "done: $OUT/report"
exit "$rc"
