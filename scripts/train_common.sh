#!/usr/bin/env bash
# shellcheck disable=SC2034  # the knobs set here are read by the scripts that source this file
# Shared by scripts/train_grpo_7b_zero2.sh (Ray) and scripts/train_grpo_7b_zero2_single_node.sh
# (deepspeed launcher): knobs, DeepSpeed flags from DS_CONFIG, the GRPO flags, preflight, logging.
# Sourced, not run. Every knob is an env var; defaults are the reference run's:
#
# Model, data, reward:
#   MODEL=Qwen/Qwen2.5-7B-Instruct  HF id or local dir (the base Qwen/Qwen2.5-7B works the same way)
#   DATA=data_out/train.jsonl       train.jsonl written by `python data/preprocess.py`
#   REWARD_URL=http://127.0.0.1:5000/get_reward   the reward server (append ?token=T when it has a token)
#   GPUS=4                          GPUs this job uses on the node
#   SAVE_DIR=runs/grpo_7b_zero2     final model (SAVE_DIR/model), checkpoints (SAVE_DIR/ckpt), logs
#                                   (SAVE_DIR/logs/*.log), tensorboard (SAVE_DIR/tensorboard)
#   RUN_NAME=grpo_<timestamp>       run name for logs, tensorboard and wandb
# Batches and lengths (DeepSpeed-side sizes come from DS_CONFIG unless set here):
#   DS_CONFIG=configs/ds_config_zero2.json   ZeRO stage, Adam offload, bf16, grad clipping, micro/global
#                                   train batch -> OpenRLHF flags (launch/preflight.py ds-flags)
#   MICRO_TRAIN_BATCH_SIZE=         per-GPU micro batch (default: DS_CONFIG's, 2)
#   TRAIN_BATCH_SIZE=               samples per optimizer step (default: DS_CONFIG's, 128)
#   ROLLOUT_BATCH_SIZE=32           prompts per rollout (x N_SAMPLES samples)
#   MICRO_ROLLOUT_BATCH_SIZE=8      samples generated/scored per micro batch per GPU
#   N_SAMPLES=8                     samples per prompt (the GRPO group)
#   PROMPT_MAX_LEN=1024  GENERATE_MAX_LEN=1024
#   MAX_SAMPLES=100000  NUM_EPISODES=1  MAX_EPOCHS=1
#   TEMPERATURE=1.0  TOP_P=1.0  SEED=42
# Optimisation:
#   ACTOR_LR=5e-7  LR_WARMUP_RATIO=0.03  INIT_KL_COEF=0.01  KL_K3=1 (1 = --use_kl_estimator_k3)
#   GROUP_NORM_STD_THRESHOLD=0.1    groups with reward std below this use r - mean (no division)
#   GRADIENT_CHECKPOINTING=1
# Logging and checkpoints:
#   TENSORBOARD=1                   --use_tensorboard SAVE_DIR/tensorboard (ignored by OpenRLHF when wandb is on)
#   WANDB=0                         1 = --use_wandb; needs WANDB_API_KEY in the env or `wandb login` done
#                                   (the key is never put on the command line)
#   WANDB_PROJECT=coderl_grpo  WANDB_ORG=
#   SAVE_STEPS=50  MAX_CKPT_NUM=3  LOGGING_STEPS=1  LOAD_CHECKPOINT=0
# Launch control:
#   TRAIN_PYTHON=python3            interpreter of the GPU env (runs preflight and OpenRLHF)
#   EXTRA_ARGS=                     appended verbatim to the OpenRLHF command (word-split)
#   DRY_RUN=0                       1 = print the full command, run preflight without needing GPUs, exit
#   SKIP_PREFLIGHT=0                1 = skip every check (DS_CONFIG is still read)
#   PREFLIGHT_SKIP=                 comma list of checks to skip: knobs,data,prompts,openrlhf,vllm,server,gpus,
#                                   memory (preflight runs every other check and reports all failures)
#   LAUNCH_SLOT=0                   1..9 = a launch beside others on this node: slot N gets its own Ray ports,
#                                   Ray temp dir and worker ports (Ray script) or MASTER_PORT (single node);
#                                   give each launch its own SAVE_DIR (docs/setup_guide.md §4)
#   MODEL_PARAMS=                   parameter count for the memory plan of an unknown model
# Memory plan (printed by preflight; docs/setup_guide.md §6):
#   PLAN_JSON=                      also write the plan (gpu_peak_gib, host_peak_gib, breakdown) to this file
#   PLAN_PROMPT_TOKENS=             prompt length to plan for (default: the longest prompt in DATA under
#                                   MODEL's chat template when MODEL is local, else PROMPT_MAX_LEN)
#   PLAN_GPU_GIB=80                 GPU size the plan must fit when no GPU is visible (DRY_RUN on a login node)
#   PLAN_HOST_GIB=                  host RAM the plan must fit (default: this machine's when it has GPUs)
#
# Preflight exit codes: 2 usage, 10 data missing, 11 data row invalid, 12 OpenRLHF not importable,
# 13 OpenRLHF not patched, 14 flag unknown to OpenRLHF, 15 reward server unreachable, 16 reward server
# serves another file / not ready / rejects the token, 17 not enough GPUs, 18 memory plan exceeds the
# GPUs or the host, 19 DS_CONFIG invalid, 20 inconsistent batch/GPU/ZeRO knobs, 21 vLLM missing, outside
# the supported versions or OpenRLHF's version checks unpatched, 22 prompts in DATA longer than
# PROMPT_MAX_LEN (they would get reward 0). With several failures, the first one's code. Otherwise the
# training job's exit code.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

abspath() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$PWD/$1" ;; esac; }

MODEL="${MODEL:-Qwen/Qwen2.5-7B-Instruct}"
DATA="$(abspath "${DATA:-data_out/train.jsonl}")"
REWARD_URL="${REWARD_URL:-http://127.0.0.1:5000/get_reward}"
GPUS="${GPUS:-4}"
SAVE_DIR="$(abspath "${SAVE_DIR:-runs/grpo_7b_zero2}")"
RUN_NAME="${RUN_NAME:-grpo_$(date +%m%dT%H%M%S)}"
DS_CONFIG="$(abspath "${DS_CONFIG:-$ROOT/configs/ds_config_zero2.json}")"
MICRO_TRAIN_BATCH_SIZE="${MICRO_TRAIN_BATCH_SIZE:-}"
TRAIN_BATCH_SIZE="${TRAIN_BATCH_SIZE:-}"
ROLLOUT_BATCH_SIZE="${ROLLOUT_BATCH_SIZE:-32}"
MICRO_ROLLOUT_BATCH_SIZE="${MICRO_ROLLOUT_BATCH_SIZE:-8}"
N_SAMPLES="${N_SAMPLES:-8}"
PROMPT_MAX_LEN="${PROMPT_MAX_LEN:-1024}"
GENERATE_MAX_LEN="${GENERATE_MAX_LEN:-1024}"
MAX_SAMPLES="${MAX_SAMPLES:-100000}"
NUM_EPISODES="${NUM_EPISODES:-1}"
MAX_EPOCHS="${MAX_EPOCHS:-1}"
TEMPERATURE="${TEMPERATURE:-1.0}"
TOP_P="${TOP_P:-1.0}"
SEED="${SEED:-42}"
ACTOR_LR="${ACTOR_LR:-5e-7}"
LR_WARMUP_RATIO="${LR_WARMUP_RATIO:-0.03}"
INIT_KL_COEF="${INIT_KL_COEF:-0.01}"
KL_K3="${KL_K3:-1}"
GROUP_NORM_STD_THRESHOLD="${GROUP_NORM_STD_THRESHOLD:-0.1}"
GRADIENT_CHECKPOINTING="${GRADIENT_CHECKPOINTING:-1}"
TENSORBOARD="${TENSORBOARD:-1}"
WANDB="${WANDB:-0}"
WANDB_PROJECT="${WANDB_PROJECT:-coderl_grpo}"
WANDB_ORG="${WANDB_ORG:-}"
SAVE_STEPS="${SAVE_STEPS:-50}"
MAX_CKPT_NUM="${MAX_CKPT_NUM:-3}"
LOGGING_STEPS="${LOGGING_STEPS:-1}"
LOAD_CHECKPOINT="${LOAD_CHECKPOINT:-0}"
TRAIN_PYTHON="${TRAIN_PYTHON:-python3}"
EXTRA_ARGS="${EXTRA_ARGS:-}"
DRY_RUN="${DRY_RUN:-0}"
SKIP_PREFLIGHT="${SKIP_PREFLIGHT:-0}"
PREFLIGHT_SKIP="${PREFLIGHT_SKIP:-}"
LAUNCH_SLOT="${LAUNCH_SLOT:-0}"
case "$LAUNCH_SLOT" in [0-9]) ;; *) printf '[train] ERROR: LAUNCH_SLOT must be 0-9 (got %s)\n' "$LAUNCH_SLOT" >&2; exit 2 ;; esac
MODEL_PARAMS="${MODEL_PARAMS:-}"
PLAN_JSON="${PLAN_JSON:-}"
PLAN_PROMPT_TOKENS="${PLAN_PROMPT_TOKENS:-}"
PLAN_GPU_GIB="${PLAN_GPU_GIB:-80}"
PLAN_HOST_GIB="${PLAN_HOST_GIB:-}"
[ -n "$PLAN_JSON" ] && PLAN_JSON="$(abspath "$PLAN_JSON")"
LOG_FILE="$SAVE_DIR/logs/$RUN_NAME.log"

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=train

# Count knobs: a typo fails here, named, not as a bash arithmetic or OpenRLHF argparse error further on.
whole_numbers GPUS MICRO_TRAIN_BATCH_SIZE TRAIN_BATCH_SIZE ROLLOUT_BATCH_SIZE MICRO_ROLLOUT_BATCH_SIZE N_SAMPLES \
  PROMPT_MAX_LEN GENERATE_MAX_LEN MAX_SAMPLES NUM_EPISODES MAX_EPOCHS SEED MAX_CKPT_NUM LOGGING_STEPS
[[ $SAVE_STEPS =~ ^(-1|[0-9]+)$ ]] || die 2 "SAVE_STEPS must be a whole number, or -1 for never (got '$SAVE_STEPS')"

# usage SCRIPT: the script's own header, then the shared knobs above.
launch_usage() {
  usage "$1"
  echo
  sed -n '/^# Model, data, reward:/,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# The OpenRLHF flags DS_CONFIG stands for (fails with exit 19 when OpenRLHF could not build it).
# Every setting is an env var: the only argument a launch script takes is --help.
parse_args() {
  case "${1:-}" in
    -h|--help) launch_usage "$SCRIPT"; exit 0 ;;
    "") ;;
    *) die 2 "unknown argument '$1': every setting is an env var (see --help)" ;;
  esac
}

ds_flags() {
  local out
  coderl_importable "$TRAIN_PYTHON" \
    || die 2 "coderl is not importable by TRAIN_PYTHON=$TRAIN_PYTHON: pip install -e $ROOT into that env (scripts/setup_env.sh does)"
  local -a over=()
  [ -n "$MICRO_TRAIN_BATCH_SIZE" ] && over+=(--micro_train_batch_size "$MICRO_TRAIN_BATCH_SIZE")
  [ -n "$TRAIN_BATCH_SIZE" ] && over+=(--train_batch_size "$TRAIN_BATCH_SIZE")
  out="$("$TRAIN_PYTHON" -m coderl.launch.preflight ds-flags --ds_config "$DS_CONFIG" "${over[@]}")" || exit $?
  mapfile -t DS_FLAGS <<<"$out"
}

# Flags common to train_ppo_ray and train_ppo: the GRPO recipe. Fills GRPO_FLAGS.
grpo_flags() {
  GRPO_FLAGS=(
    --pretrain "$MODEL"
    --remote_rm_url "$REWARD_URL"
    --prompt_data "$DATA" --input_key input --apply_chat_template
    --advantage_estimator group_norm --group_norm_std_threshold "$GROUP_NORM_STD_THRESHOLD"
    --n_samples_per_prompt "$N_SAMPLES"
    --rollout_batch_size "$ROLLOUT_BATCH_SIZE" --micro_rollout_batch_size "$MICRO_ROLLOUT_BATCH_SIZE"
    --prompt_max_len "$PROMPT_MAX_LEN" --generate_max_len "$GENERATE_MAX_LEN"
    --max_samples "$MAX_SAMPLES" --num_episodes "$NUM_EPISODES" --max_epochs "$MAX_EPOCHS"
    --temperature "$TEMPERATURE" --top_p "$TOP_P" --seed "$SEED"
    --actor_learning_rate "$ACTOR_LR" --lr_warmup_ratio "$LR_WARMUP_RATIO" --init_kl_coef "$INIT_KL_COEF"
    "${DS_FLAGS[@]}"
    --save_path "$SAVE_DIR/model" --ckpt_path "$SAVE_DIR/ckpt" --save_steps "$SAVE_STEPS"
    --max_ckpt_num "$MAX_CKPT_NUM" --logging_steps "$LOGGING_STEPS" --eval_steps -1
    --wandb_run_name "$RUN_NAME"
  )
  [ "$KL_K3" = 1 ] && GRPO_FLAGS+=(--use_kl_estimator_k3)
  [ "$GRADIENT_CHECKPOINTING" = 1 ] && GRPO_FLAGS+=(--gradient_checkpointing)
  [ "$LOAD_CHECKPOINT" = 1 ] && GRPO_FLAGS+=(--load_checkpoint)
  [ "$TENSORBOARD" = 1 ] && GRPO_FLAGS+=(--use_tensorboard "$SAVE_DIR/tensorboard")
  if [ "$WANDB" = 1 ]; then
    # wandb reads its key from the env or from `wandb login`'s netrc entry; neither = a run that cannot log.
    if [ -z "${WANDB_API_KEY:-}" ] && ! grep -qs "api.wandb.ai" "${NETRC:-$HOME/.netrc}"; then
      die 2 "WANDB=1 needs WANDB_API_KEY in the environment (or \`wandb login\` done for this user); or WANDB=0"
    fi
    GRPO_FLAGS+=(--use_wandb True --wandb_project "$WANDB_PROJECT")
    [ -n "$WANDB_ORG" ] && GRPO_FLAGS+=(--wandb_org "$WANDB_ORG")
  fi
  local -a extra=()
  # EXTRA_ARGS is word-split on purpose (it is a list of flags); no globbing.
  [ -n "$EXTRA_ARGS" ] && read -r -a extra <<<"$EXTRA_ARGS"
  GRPO_FLAGS+=("${extra[@]}")
  return 0
}

# preflight CLI_MODULE FLAGS...: run the checks (honours SKIP_PREFLIGHT, PREFLIGHT_SKIP, DRY_RUN).
preflight() {
  local cli="$1"; shift
  if [ "$SKIP_PREFLIGHT" = 1 ]; then log "SKIP_PREFLIGHT=1: not checking anything"; return 0; fi
  local -a opts=(--data "$DATA" --reward_url "$REWARD_URL" --gpus "$GPUS" --model "$MODEL" --cli "$cli"
                 --skip "$PREFLIGHT_SKIP")
  [ "$DRY_RUN" = 1 ] && opts+=(--dry_run)
  [ -n "$MODEL_PARAMS" ] && opts+=(--model_params "$MODEL_PARAMS")
  [ -n "$PLAN_JSON" ] && opts+=(--plan_json "$PLAN_JSON")
  [ -n "$PLAN_PROMPT_TOKENS" ] && opts+=(--plan_prompt_tokens "$PLAN_PROMPT_TOKENS")
  opts+=(--plan_gpu_gib "$PLAN_GPU_GIB")
  [ -n "$PLAN_HOST_GIB" ] && opts+=(--plan_host_gib "$PLAN_HOST_GIB")
  "$TRAIN_PYTHON" -m coderl.launch.preflight check "${opts[@]}" -- "$@"
}

# HF generate's measured cost (H100, 3B-shape model, batch 16, HF generate inside OpenRLHF's actor):
# ~92 ms per token step, and a 1024-token micro-rollout of 8 did not finish in 3.4 minutes (issue 11).
HF_MS_PER_TOKEN_STEP=92

# hf_generate_warning WHY ACTOR_GPUS: the loud warning when rollouts run on HF generate instead of vLLM.
hf_generate_warning() {
  local why="$1" gpus="$2" micro steps secs
  micro=$(( (ROLLOUT_BATCH_SIZE * N_SAMPLES / gpus + MICRO_ROLLOUT_BATCH_SIZE - 1) / MICRO_ROLLOUT_BATCH_SIZE ))
  steps=$(( micro * GENERATE_MAX_LEN ))
  secs=$(( steps * HF_MS_PER_TOKEN_STEP / 1000 ))
  log "WARNING: ================================================================================"
  log "WARNING: rollouts use HF generate, not vLLM: $why."
  log "WARNING: HF generate measured ~${HF_MS_PER_TOKEN_STEP} ms per token step on an H100 (3B-shape model,"
  log "WARNING: batch 16); a 1024-token micro-rollout of 8 did not finish in 3.4 minutes. Here each GPU runs"
  log "WARNING: $micro micro-rollout(s) x $GENERATE_MAX_LEN token steps = ~$((secs / 60)) min $((secs % 60)) s of generation per"
  log "WARNING: training step. Install vLLM for rollouts on vLLM engines: docs/setup_guide.md §4 (USE_VLLM)."
  log "WARNING: ================================================================================"
}

# print_cmd WORDS...: the command, shell-quoted, one flag per line.
print_cmd() {
  local w out=""
  for w in "$@"; do
    if [[ "$w" == --* ]]; then out+=$' \\\n    '; else out+=" "; fi
    out+="$(printf '%q' "$w")"
  done
  printf '%s\n' "${out# }"
}

# run_logged WORDS...: run, tee stdout+stderr to LOG_FILE, return the command's own exit code.
run_logged() {
  mkdir -p "$(dirname "$LOG_FILE")"
  local rc
  set +e
  "$@" 2>&1 | tee -a "$LOG_FILE"
  rc="${PIPESTATUS[0]}"
  set -e
  return "$rc"
}
