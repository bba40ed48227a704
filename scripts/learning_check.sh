#!/usr/bin/env bash
# The GRPO learning check (issue 14): does the whole loop improve a policy? On one GPU, per seed:
#   synthetic task -> data/preprocess.py -> warm start (tokenizer + small Qwen2 model + SFT) -> held-out
#   pass@k -> GRPO through scripts/train_grpo_7b_zero2.sh and our reward server -> held-out pass@k again,
# then a report: OUT/report/{curves.png,report.md,report.json} with a PASS/FAIL line (exit 0 / 1).
#
# Every knob is an env var (defaults in brackets):
#   OUT [runs/learning_check]  output dir: task/, data/, seed<S>/{sft,eval_before,grpo,eval_after}, report/
#   SEEDS ["1"]                space-separated seeds, one full run each (task, model init, sampling, GRPO)
#   TASK_SEED [0]              seed of the synthetic problems and their train/held-out split
#   DIFFICULTY [3]             most steps per problem (data/synthetic, 2..6)
#   N_TRAIN [4000]  N_HELDOUT [200]   problems
#   VERIFY [1]                 1 = preprocess --verify (runs every reference solution in the sandbox)
#   MODEL_SHAPE [small]        learning_check/model.py SHAPES: nano (tests only), small (~3M), base (~11M)
#   VOCAB_SIZE [1024]          BPE vocab fitted to the train text
#   SFT_STEPS [300]  SFT_BATCH [32]  SFT_LR [3e-3]   the warm start (CPU: 160 steps gave held-out
#                              pass@1 9%, pass@8 28%; docs/performance.md)
#   EVAL_N [8]  EVAL_K [1,8]  EVAL_MAX_NEW_TOKENS [128]  EVAL_BATCH [256]  EVAL_TEMPERATURE [1.0]
#   GRPO_STEPS [30]            rollouts (MAX_SAMPLES = GRPO_STEPS x GRPO_PROMPTS, one episode)
#   GRPO_PROMPTS [32]  GRPO_N_SAMPLES [8]  GRPO_TRAIN_BATCH [128]  GRPO_MICRO_TRAIN_BATCH [64]
#   GRPO_MICRO_ROLLOUT_BATCH [256]  GRPO_GEN_LEN [128]  GRPO_PROMPT_LEN [320]
#   GRPO_LR [5e-5]  GRPO_KL [0.001]  GRPO_TEMPERATURE [1.0]
#   GRPO_EXTRA_ARGS []         appended to the launch script's EXTRA_ARGS
#   TIME_BUDGET [360]          seconds the GRPO stage may take per seed (killed after; the check then FAILs)
#   PORT [5077]                reward server port (run.sh of the GPU kit holds 5000)
#   GPUS [1]  TARGET_POINTS [15]  PYTHON [python3]  DEVICE [auto]
#   DRY_RUN [0]                1 = CPU: tiny sizes, every CPU stage for real, the GRPO command printed by
#                              the launch script's own DRY_RUN, the report drawn from a stand-in log
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DRY_RUN="${DRY_RUN:-0}"
if [[ $DRY_RUN == 1 ]]; then dflt() { printf '%s\n' "$2"; } else dflt() { printf '%s\n' "$1"; }; fi
OUT="${OUT:-runs/learning_check}"
SEEDS="${SEEDS:-1}"
TASK_SEED="${TASK_SEED:-0}"
DIFFICULTY="${DIFFICULTY:-3}"
N_TRAIN="${N_TRAIN:-$(dflt 4000 60)}"
N_HELDOUT="${N_HELDOUT:-$(dflt 200 6)}"
VERIFY="${VERIFY:-1}"
MODEL_SHAPE="${MODEL_SHAPE:-$(dflt small nano)}"
VOCAB_SIZE="${VOCAB_SIZE:-$(dflt 1024 400)}"
SFT_STEPS="${SFT_STEPS:-$(dflt 300 3)}"
SFT_BATCH="${SFT_BATCH:-$(dflt 32 4)}"
SFT_LR="${SFT_LR:-3e-3}"
EVAL_N="${EVAL_N:-$(dflt 8 2)}"
EVAL_K="${EVAL_K:-$(dflt 1,8 1,2)}"
EVAL_MAX_NEW_TOKENS="${EVAL_MAX_NEW_TOKENS:-$(dflt 128 8)}"
EVAL_BATCH="${EVAL_BATCH:-$(dflt 256 16)}"
EVAL_TEMPERATURE="${EVAL_TEMPERATURE:-1.0}"
GRPO_STEPS="${GRPO_STEPS:-30}"
GRPO_PROMPTS="${GRPO_PROMPTS:-32}"
GRPO_N_SAMPLES="${GRPO_N_SAMPLES:-8}"
GRPO_TRAIN_BATCH="${GRPO_TRAIN_BATCH:-128}"
GRPO_MICRO_TRAIN_BATCH="${GRPO_MICRO_TRAIN_BATCH:-64}"
GRPO_MICRO_ROLLOUT_BATCH="${GRPO_MICRO_ROLLOUT_BATCH:-256}"
GRPO_GEN_LEN="${GRPO_GEN_LEN:-128}"
GRPO_PROMPT_LEN="${GRPO_PROMPT_LEN:-320}"
GRPO_LR="${GRPO_LR:-5e-5}"
GRPO_KL="${GRPO_KL:-0.001}"
GRPO_TEMPERATURE="${GRPO_TEMPERATURE:-1.0}"
GRPO_EXTRA_ARGS="${GRPO_EXTRA_ARGS:-}"
TIME_BUDGET="${TIME_BUDGET:-360}"
PORT="${PORT:-5077}"
GPUS="${GPUS:-1}"
TARGET_POINTS="${TARGET_POINTS:-15}"
PYTHON="${PYTHON:-python3}"
DEVICE="${DEVICE:-auto}"

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=learning_check
coderl_importable "$PYTHON" || die 2 "PYTHON=$PYTHON cannot import coderl (pip install -e .)"
missing="$(missing_modules "$PYTHON" torch transformers tokenizers matplotlib)"
[[ -z $missing ]] || die 2 "PYTHON=$PYTHON cannot import $missing (even DRY_RUN=1 trains a tiny model): bash \
scripts/test.sh installs them into .venv (CPU torch + .[learning-check]), then PYTHON=.venv/bin/python"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
t0=$SECONDS
stage() { echo "=== [learning_check $((SECONDS - t0))s] $*"; }

stage "task (difficulty $DIFFICULTY, $N_TRAIN train / $N_HELDOUT held-out, seed $TASK_SEED)"
"$PYTHON" -m coderl.data.synthetic.make_task --out_dir "$OUT/task" --n_train "$N_TRAIN" \
  --n_heldout "$N_HELDOUT" --difficulty "$DIFFICULTY" --seed "$TASK_SEED"
pp=(--format mbpp --keep_reference --answer_format code_block --system_prompt code_block --source synthetic
    --no_progress)
[[ $VERIFY == 1 ]] && pp+=(--verify)
stage "preprocess"
"$PYTHON" "$ROOT/data/preprocess.py" --input_dir "$OUT/task/train" --output_dir "$OUT/data/train" \
  --test_ratio 0 "${pp[@]}" | tail -3
"$PYTHON" "$ROOT/data/preprocess.py" --input_dir "$OUT/task/heldout" --output_dir "$OUT/data/heldout" \
  --test_ratio 1 "${pp[@]}" | tail -3
TRAIN="$OUT/data/train/train.jsonl" HELDOUT="$OUT/data/heldout/test.jsonl"

stage "reward server on port $PORT"
"$PYTHON" "$ROOT/rewards/reward_server.py" --data_path "$TRAIN" --port "$PORT" >"$OUT/server.log" 2>&1 &
SRV=$!
trap 'kill "$SRV" 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  "$PYTHON" - "$PORT" <<'PY' && break
import sys, urllib.request
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=1)
except OSError:
    sys.exit(1)
PY
  kill -0 "$SRV" 2>/dev/null || { echo "error: reward server exited; see $OUT/server.log" >&2; exit 1; }
  sleep 1
done

evaluate() {  # model dir, out dir, seed
  "$PYTHON" -m coderl.rewards.evaluation.cli --data "$HELDOUT" --model "$1" --out "$2" --n "$EVAL_N" --k "$EVAL_K" \
    --temperature "$EVAL_TEMPERATURE" --max_new_tokens "$EVAL_MAX_NEW_TOKENS" --batch_size "$EVAL_BATCH" \
    --seed "$3" --backend hf --no_progress
}

runs=()
for S in $SEEDS; do
  R="$OUT/seed$S"
  runs+=(--run "seed$S=$R")
  stage "seed $S: warm start ($MODEL_SHAPE, $SFT_STEPS steps)"
  "$PYTHON" -m coderl.learning_check.warm_start --train "$TRAIN" --out_dir "$R/sft" --shape "$MODEL_SHAPE" \
    --vocab_size "$VOCAB_SIZE" --steps "$SFT_STEPS" --batch_size "$SFT_BATCH" --lr "$SFT_LR" --seed "$S" \
    --device "$DEVICE"
  stage "seed $S: held-out pass@k before GRPO"
  (cd "$ROOT" && evaluate "$R/sft" "$R/eval_before" "$S")
  stage "seed $S: GRPO, $GRPO_STEPS rollouts of $GRPO_PROMPTS prompts x $GRPO_N_SAMPLES samples"
  rm -rf "$R/grpo"
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
    # warm start itself and the curves come from a stand-in log, so the report says FAIL by design.
    env "${grpo_env[@]}" PREFLIGHT_SKIP=memory,openrlhf,gpus bash "$ROOT/scripts/train_grpo_7b_zero2.sh"
    "$PYTHON" -m coderl.learning_check.dry_run "$R/grpo/tensorboard"
    mkdir -p "$R/grpo" && cp -r "$R/sft" "$R/grpo/model"
  else
    rc=0
    (cd "$ROOT" && env "${grpo_env[@]}" timeout "$TIME_BUDGET" bash scripts/train_grpo_7b_zero2.sh) \
      >"$R/grpo.log" 2>&1 || rc=$?
    grep -a "Episode \[" "$R/grpo.log" | tail -1 || true
    if [[ $rc != 0 || ! -f $R/grpo/model/config.json ]]; then
      tail -60 "$R/grpo.log"
      echo "error: GRPO for seed $S failed (rc=$rc, 124 = over TIME_BUDGET=$TIME_BUDGET s); see $R/grpo.log" >&2
      exit 1
    fi
  fi
  stage "seed $S: held-out pass@k after GRPO"
  (cd "$ROOT" && evaluate "$R/grpo/model" "$R/eval_after" "$S")
done

stage "report"
rc=0
"$PYTHON" -m coderl.learning_check.report "${runs[@]}" --out "$OUT/report" --target_points "$TARGET_POINTS" || rc=$?
stage "done: $OUT/report"
if [[ $DRY_RUN == 1 ]]; then
  echo "DRY_RUN: every CPU stage ran; the verdict above is of a stand-in log, not a result"
  exit 0
fi
exit "$rc"
