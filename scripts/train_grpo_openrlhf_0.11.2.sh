#!/usr/bin/env bash
# GRPO with coderl's reward on OpenRLHF 0.11.2 (the current PyPI release) + patches/0.11.2/ (adaptive
# group_norm): `python -m openrlhf.cli.train_ppo_ray` with that release's dotted flags. The recipe is
# scripts/train_grpo_7b_zero2.sh's (group_norm, KL loss with the k3 estimator, ZeRO-2 + Adam offload from
# DS_CONFIG, bf16, gradient checkpointing, actor and reference colocated); 0.11.2 generates with vLLM.
#
#   pip install openrlhf==0.11.2 && bash patches/apply_patches.sh "$(python -c 'import site; print(site.getsitepackages()[0])')"
#   terminal 1:  python rewards/reward_server.py --data_path data_out/train.jsonl --port 5000
#   terminal 2:  bash scripts/train_grpo_openrlhf_0.11.2.sh
#                DRY_RUN=1 bash scripts/train_grpo_openrlhf_0.11.2.sh   # print the command, run nothing
#
# Reward and vLLM knobs (env vars; the shared ones follow):
#   REWARD=server            server: --reward.remote_url REWARD_URL (0.11.2's HTTP client sends no token: a
#                            server started with a token rejects it, use REWARD=func);
#                            func: --reward.remote_url rewards/reward_func.py, scoring in-process, or with
#                            CODERL_REWARD_URL + CODERL_AUTH_TOKEN exported, through the server with its token
#   VLLM_ENGINES=$GPUS  VLLM_TP_SIZE=1  VLLM_GPU_UTIL=0.5   vLLM engines, colocated with actor and reference
#   Ray: ray.init() inside OpenRLHF joins the cluster named by RAY_ADDRESS, else starts a local one.
set -euo pipefail

SCRIPT="${BASH_SOURCE[0]}"
# shellcheck source=scripts/train_common.sh
source "$(dirname "$SCRIPT")/train_common.sh"
parse_args "$@"

REWARD="${REWARD:-server}"
VLLM_ENGINES="${VLLM_ENGINES:-$GPUS}"
VLLM_TP_SIZE="${VLLM_TP_SIZE:-1}"
VLLM_GPU_UTIL="${VLLM_GPU_UTIL:-0.5}"
whole_numbers VLLM_ENGINES VLLM_TP_SIZE

case "$REWARD" in
  server) REMOTE="$REWARD_URL" ;;
  func) REMOTE="$ROOT/rewards/reward_func.py" ;;
  *) die 2 "REWARD must be server or func (got '$REWARD')" ;;
esac

# DS_CONFIG -> the 0.5.7 flag names preflight.py knows -> this release's names.
ds_flags
NEW_DS=()
for ((i = 0; i < ${#DS_FLAGS[@]}; i++)); do
  f="${DS_FLAGS[i]}"
  case "$f" in
    --zero_stage) NEW_DS+=(--ds.zero_stage "${DS_FLAGS[++i]}") ;;
    --adam_offload) NEW_DS+=(--ds.adam_offload) ;;
    --bf16) NEW_DS+=(--ds.param_dtype bf16) ;;
    --max_norm) NEW_DS+=(--actor.max_norm "${DS_FLAGS[++i]}") ;;
    --zpg) NEW_DS+=(--ds.zpg "${DS_FLAGS[++i]}") ;;
    --micro_train_batch_size) NEW_DS+=(--train.micro_batch_size "${DS_FLAGS[++i]}") ;;
    --train_batch_size) NEW_DS+=(--train.batch_size "${DS_FLAGS[++i]}") ;;
    *) die 19 "DS_CONFIG gives '$f', which this script cannot map to OpenRLHF 0.11.2's flags" ;;
  esac
done

CMD=("$TRAIN_PYTHON" -m openrlhf.cli.train_ppo_ray
  --actor.num_nodes 1 --actor.num_gpus_per_node "$GPUS" --ref.num_nodes 1 --ref.num_gpus_per_node "$GPUS"
  --train.colocate_all
  --vllm.num_engines "$VLLM_ENGINES" --vllm.tensor_parallel_size "$VLLM_TP_SIZE"
  --vllm.gpu_memory_utilization "$VLLM_GPU_UTIL" --vllm.enable_sleep --ds.enable_sleep
  --actor.model_name_or_path "$MODEL"
  --reward.remote_url "$REMOTE"
  --data.prompt_dataset "$DATA" --data.input_key input --data.label_key label --data.apply_chat_template
  --algo.advantage.estimator group_norm --algo.advantage.group_norm_std_threshold "$GROUP_NORM_STD_THRESHOLD"
  --algo.kl.use_loss --algo.kl.init_coef "$INIT_KL_COEF"
  --rollout.n_samples_per_prompt "$N_SAMPLES"
  --rollout.batch_size "$ROLLOUT_BATCH_SIZE" --rollout.micro_batch_size "$MICRO_ROLLOUT_BATCH_SIZE"
  --data.max_len "$((PROMPT_MAX_LEN + GENERATE_MAX_LEN))" --rollout.max_new_tokens "$GENERATE_MAX_LEN"
  --data.max_samples "$MAX_SAMPLES" --train.num_episodes "$NUM_EPISODES" --train.max_epochs "$MAX_EPOCHS"
  --rollout.temperature "$TEMPERATURE" --rollout.top_p "$TOP_P" --train.seed "$SEED"
  --actor.adam.lr "$ACTOR_LR" --actor.lr_warmup_ratio "$LR_WARMUP_RATIO"
  "${NEW_DS[@]}"
  --ckpt.output_dir "$SAVE_DIR/model" --ckpt.path "$SAVE_DIR/ckpt" --ckpt.save_steps "$SAVE_STEPS"
  --ckpt.max_num "$MAX_CKPT_NUM" --logger.logging_steps "$LOGGING_STEPS" --eval.steps -1
  --logger.wandb.run_name "$RUN_NAME")
# KL_K3=1 (default): the k3 estimator; otherwise OpenRLHF's default (k1)
[ "$KL_K3" = 1 ] && CMD+=(--algo.kl.estimator k3)
[ "$GRADIENT_CHECKPOINTING" = 1 ] && CMD+=(--actor.gradient_checkpointing_enable)
[ "$LOAD_CHECKPOINT" = 1 ] && CMD+=(--ckpt.load_enable)
[ "$TENSORBOARD" = 1 ] && CMD+=(--logger.tensorboard_dir "$SAVE_DIR/tensorboard")
# 0.11.2 takes the wandb key only as a flag, which would print it into the log: no WANDB here
[ "$WANDB" = 1 ] && die 2 "WANDB=1 is not supported by this script (0.11.2 wants the key on the command line)"
if [ -n "$EXTRA_ARGS" ]; then
  # EXTRA_ARGS is word-split on purpose (it is a list of flags); no globbing.
  read -r -a extra <<<"$EXTRA_ARGS"
  CMD+=("${extra[@]}")
fi

# This release's launch has no preflight: at least the data must be there before Ray and vLLM start.
if [ ! -s "$DATA" ]; then
  [ "$DRY_RUN" = 1 ] || die 10 "DATA=$DATA is missing or empty (python data/preprocess.py writes it)"
  log "WARNING: DATA=$DATA is missing or empty (python data/preprocess.py writes it)"
fi
if [ "$DRY_RUN" = 1 ]; then
  log "command:"
  print_cmd "${CMD[@]}"
  log "DRY_RUN=1: not launching"
  exit 0
fi
log "log file: $LOG_FILE"
run_logged print_cmd "${CMD[@]}"
run_logged "${CMD[@]}"
