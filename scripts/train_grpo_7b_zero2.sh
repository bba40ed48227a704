#!/usr/bin/env bash
# GRPO with the adaptive group-norm advantage for code generation: OpenRLHF 0.5.7 + the coderl patches,
# Ray-orchestrated (`python -m openrlhf.cli.train_ppo_ray`, submitted as a Ray job).
#
# Sized for: 1 node, 4x NVIDIA A800-SXM4-80GB, >= 256 GiB host RAM, Qwen2.5-7B-Instruct (7.6B params).
# Actor and reference model share every GPU (--colocate_actor_ref: 0.75 + 0.25 of a GPU each); DeepSpeed
# ZeRO-2 with Adam offloaded to CPU (configs/ds_config_zero2.json), gradient checkpointing, bf16, no
# flash-attn (PyTorch SDPA). Without vLLM the actor generates with HF generate. Memory estimate:
# `python -m coderl.launch.preflight estimate --model MODEL --gpus 4`. Details: docs/setup_guide.md.
#
#   terminal 1:  python rewards/reward_server.py --data_path data_out/train.jsonl --port 5000
#   terminal 2:  bash scripts/train_grpo_7b_zero2.sh
#                DRY_RUN=1 bash scripts/train_grpo_7b_zero2.sh   # checks (no GPU needed) + the command
#
# Ray and vLLM knobs (env vars):
#   RAY_ADDRESS=             dashboard URL of a running cluster (http://HEAD:8265); empty = reuse or start a
#                            local head on this node (127.0.0.1)
#   RAY_PORT=6379  RAY_DASHBOARD_PORT=8265   ports of the local head
#   RAY_STOP_ON_EXIT=1       stop the local head on exit when this script started it
#   USE_VLLM=0               1 = generate with VLLM_ENGINES vLLM engines on GPUs of their own, taken out of
#                            GPUS (GPUS=4, VLLM_ENGINES=2: actor+ref on 2 GPUs, one engine on each other GPU)
#   VLLM_ENGINES=2  VLLM_TP_SIZE=1
#   REF_OFFLOAD=0            1 = --ref_reward_offload (reference weights parked on CPU between uses)
#   RAY_BIN=                 the `ray` CLI to use (default: TRAIN_PYTHON -m ray.scripts.scripts)
set -euo pipefail

SCRIPT="${BASH_SOURCE[0]}"
# shellcheck source=scripts/train_common.sh
source "$(dirname "$SCRIPT")/train_common.sh"
parse_args "$@"

RAY_ADDRESS="${RAY_ADDRESS:-}"
RAY_PORT="${RAY_PORT:-6379}"
RAY_DASHBOARD_PORT="${RAY_DASHBOARD_PORT:-8265}"
RAY_STOP_ON_EXIT="${RAY_STOP_ON_EXIT:-1}"
USE_VLLM="${USE_VLLM:-0}"
VLLM_ENGINES="${VLLM_ENGINES:-2}"
VLLM_TP_SIZE="${VLLM_TP_SIZE:-1}"
REF_OFFLOAD="${REF_OFFLOAD:-0}"
RAY_BIN="${RAY_BIN:-}"

if [ "$USE_VLLM" = 1 ]; then ENGINES="$VLLM_ENGINES"; else ENGINES=0; fi
ACTOR_GPUS=$((GPUS - ENGINES * VLLM_TP_SIZE))

ds_flags
grpo_flags
CMD=("$TRAIN_PYTHON" -m openrlhf.cli.train_ppo_ray
  --actor_num_nodes 1 --actor_num_gpus_per_node "$ACTOR_GPUS"
  --ref_num_nodes 1 --ref_num_gpus_per_node "$ACTOR_GPUS" --colocate_actor_ref
  --vllm_num_engines "$ENGINES" --vllm_tensor_parallel_size "$VLLM_TP_SIZE")
[ "$REF_OFFLOAD" = 1 ] && CMD+=(--ref_reward_offload)
CMD+=("${GRPO_FLAGS[@]}")

DASHBOARD="${RAY_ADDRESS:-http://127.0.0.1:$RAY_DASHBOARD_PORT}"
SUBMISSION_ID="coderl-$RUN_NAME"
if [ -n "$RAY_BIN" ]; then RAY=("$RAY_BIN"); else RAY=("$TRAIN_PYTHON" -m ray.scripts.scripts); fi
SUBMIT=("${RAY[@]}" job submit --address "$DASHBOARD" --submission-id "$SUBMISSION_ID" --)

if [ "$DRY_RUN" = 1 ]; then
  log "command:"
  print_cmd "${SUBMIT[@]}" "${CMD[@]}"
  preflight openrlhf.cli.train_ppo_ray "${CMD[@]:3}"
  log "DRY_RUN=1: not launching"
  exit 0
fi

log "log file: $LOG_FILE"
run_logged print_cmd "${SUBMIT[@]}" "${CMD[@]}"
run_logged preflight openrlhf.cli.train_ppo_ray "${CMD[@]:3}" || exit $?

STARTED_RAY=0
SUBMITTED=0
# shellcheck disable=SC2329  # invoked by the EXIT trap
cleanup() {
  local rc=$?
  if [ "$SUBMITTED" = 1 ] && [ "$rc" != 0 ]; then
    # Ctrl-C only stops `ray job submit` from tailing; the job itself would keep the GPUs.
    log "stopping Ray job $SUBMISSION_ID"
    "${RAY[@]}" job stop --address "$DASHBOARD" "$SUBMISSION_ID" >/dev/null 2>&1 || true
  fi
  if [ "$STARTED_RAY" = 1 ] && [ "$RAY_STOP_ON_EXIT" = 1 ]; then
    log "stopping the local Ray head this script started"
    "${RAY[@]}" stop >/dev/null 2>&1 || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "$RAY_ADDRESS" ]; then
  if "${RAY[@]}" status --address "127.0.0.1:$RAY_PORT" >/dev/null 2>&1; then
    log "reusing the Ray head at 127.0.0.1:$RAY_PORT"
  else
    log "starting a local Ray head (127.0.0.1:$RAY_PORT, $GPUS GPUs, dashboard :$RAY_DASHBOARD_PORT)"
    run_logged "${RAY[@]}" start --head --node-ip-address 127.0.0.1 --port "$RAY_PORT" --num-gpus "$GPUS" \
      --dashboard-host 127.0.0.1 --dashboard-port "$RAY_DASHBOARD_PORT" --disable-usage-stats \
      || die 1 "ray start failed (see $LOG_FILE)"
    STARTED_RAY=1
  fi
fi

SUBMITTED=1
set +e
run_logged "${SUBMIT[@]}" "${CMD[@]}"
rc=$?
set -e
if [ "$rc" = 0 ]; then SUBMITTED=0; log "job $SUBMISSION_ID succeeded; model in $SAVE_DIR/model"; else
  log "job $SUBMISSION_ID failed with exit code $rc (log: $LOG_FILE)"; fi
exit "$rc"
