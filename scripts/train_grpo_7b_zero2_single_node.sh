#!/usr/bin/env bash
# GRPO with the adaptive group-norm advantage, without Ray: OpenRLHF 0.5.7's `openrlhf.cli.train_ppo`
# (+ the coderl patches, which add group_norm to it as well) under the DeepSpeed launcher, one node.
#
# Sized for: 1 node, 4x NVIDIA A800-SXM4-80GB, >= 256 GiB host RAM, Qwen2.5-7B-Instruct. Every rank holds
# an actor shard (ZeRO-2, Adam offloaded to CPU, gradient checkpointing, bf16) and a full bf16 reference
# model, as the Ray script's colocated layout does; generation is HF generate (train_ppo has no vLLM: a
# loud warning states its cost; the Ray script uses vLLM). Use it when Ray is unavailable or to debug
# without the Ray job layer; same knobs, same preflight and memory plan.
#
#   terminal 1:  python rewards/reward_server.py --data_path data_out/train.jsonl --port 5000 \
#                  --reward_log runs/grpo_7b_zero2/logs/rewards.jsonl   # per-batch reward components
#   terminal 2:  bash scripts/train_grpo_7b_zero2_single_node.sh
#
# Launcher knobs (env vars):
#   DEEPSPEED=deepspeed      the DeepSpeed launcher of the GPU env
#   MASTER_PORT=29500+N      rendezvous port (N = LAUNCH_SLOT)
#   INCLUDE=                 GPU list for the launcher, e.g. localhost:0,1,2,3 (default: --num_gpus GPUS)
set -euo pipefail

SCRIPT="${BASH_SOURCE[0]}"
# shellcheck source=scripts/train_common.sh
source "$(dirname "$SCRIPT")/train_common.sh"
parse_args "$@"

DEEPSPEED="${DEEPSPEED:-deepspeed}"
MASTER_PORT="${MASTER_PORT:-$((29500 + LAUNCH_SLOT))}"
INCLUDE="${INCLUDE:-}"

ds_flags
grpo_flags
if [ -n "$INCLUDE" ]; then LAUNCH=("$DEEPSPEED" --include "$INCLUDE"); else LAUNCH=("$DEEPSPEED" --num_gpus "$GPUS"); fi
LAUNCH+=(--master_port "$MASTER_PORT" --module openrlhf.cli.train_ppo)
FLAGS=("${GRPO_FLAGS[@]}")

WHY="openrlhf.cli.train_ppo (no Ray) has no vLLM; scripts/train_grpo_7b_zero2.sh has"

if [ "$DRY_RUN" = 1 ]; then
  log "command:"
  print_cmd "${LAUNCH[@]}" "${FLAGS[@]}"
  hf_generate_warning "$WHY" "$GPUS"
  preflight openrlhf.cli.train_ppo "${FLAGS[@]}"
  log "DRY_RUN=1: not launching"
  exit 0
fi

log "log file: $LOG_FILE"
run_logged print_cmd "${LAUNCH[@]}" "${FLAGS[@]}"
run_logged hf_generate_warning "$WHY" "$GPUS"
run_logged preflight openrlhf.cli.train_ppo "${FLAGS[@]}" || exit $?
set +e
run_logged "${LAUNCH[@]}" "${FLAGS[@]}"
rc=$?
set -e
if [ "$rc" = 0 ]; then log "training succeeded; model in $SAVE_DIR/model"; else
  log "training failed with exit code $rc (log: $LOG_FILE)"; fi
exit "$rc"
