#!/usr/bin/env bash
# GRPO with the adaptive group-norm advantage for code generation: OpenRLHF 0.5.7 + the coderl patches,
# Ray-orchestrated (`python -m openrlhf.cli.train_ppo_ray`, submitted as a Ray job).
#
# Sized for: 1 node, 4x NVIDIA A800-SXM4-80GB, >= 256 GiB host RAM, Qwen2.5-7B-Instruct (7.6B params).
# Rollouts on vLLM when it imports (USE_VLLM=auto): OpenRLHF 0.5.7 gives every engine whole GPUs, so the
# 4 GPUs split into actor + reference colocated on 2 GPUs (0.75 + 0.25 of each) and 2 vLLM engines on the
# other 2. Without vLLM, actor + reference share all 4 GPUs and generate with HF generate (a loud warning
# states its cost). DeepSpeed ZeRO-2 with Adam offloaded to CPU (configs/ds_config_zero2.json), gradient
# checkpointing, bf16, no flash-attn (PyTorch SDPA). Preflight prints the memory plan per GPU and host
# (DRY_RUN=1, PLAN_JSON=path). Details: docs/setup_guide.md.
#
#   terminal 1:  python rewards/reward_server.py --data_path data_out/train.jsonl --port 5000 \
#                  --reward_log runs/grpo_7b_zero2/logs/rewards.jsonl   # per-batch reward components
#   terminal 2:  bash scripts/train_grpo_7b_zero2.sh
#                DRY_RUN=1 bash scripts/train_grpo_7b_zero2.sh   # checks (no GPU needed) + the command
#
# vLLM knobs (env vars):
#   USE_VLLM=auto            auto = vLLM engines when `import vllm` works in TRAIN_PYTHON and GPUS >= 2, else
#                            HF generate; 1 = vLLM (fails when it does not import); 0 = HF generate
#   VLLM_ENGINES=auto        engines, each on VLLM_TP_SIZE GPUs of its own (auto = GPUS / (2 x VLLM_TP_SIZE):
#                            half the GPUs generate, the actor + reference train on the other half)
#   VLLM_TP_SIZE=1
#   REF_OFFLOAD=0            1 = --ref_reward_offload (only effective with ZeRO-3; preflight says so)
# Ray knobs (env vars; LAUNCH_SLOT=N shifts the defaults so that launches can run side by side):
#   RAY_ADDRESS=             dashboard URL of a running cluster (http://HEAD:8265); empty = reuse or start a
#                            local head on this node (127.0.0.1)
#   RAY_PORT=6379+N  RAY_DASHBOARD_PORT=8265+N  RAY_CLIENT_PORT=10001-N  RAY_AGENT_PORT=52365+N
#                            ports of the local head (GCS, dashboard/job API, client server, dashboard agent)
#   RAY_WORKER_PORTS=        min-max worker ports (slot 0: Ray's 10002-19999; slot N: 2N000-2N999, N >= 1)
#   RAY_TEMP_DIR=            Ray's session dir (slot 0: Ray's /tmp/ray; slot N: /tmp/ray_slotN)
#   RAY_STOP_ON_EXIT=1       stop the local head on exit when this script started it (only that head:
#                            its `ray start --block` process, never other Ray processes of the node)
#   RAY_START_TIMEOUT=120    seconds to wait for the head's job API
#   RAY_BIN=                 the `ray` CLI to use (default: TRAIN_PYTHON -m ray.scripts.scripts)
set -euo pipefail

SCRIPT="${BASH_SOURCE[0]}"
# shellcheck source=scripts/train_common.sh
source "$(dirname "$SCRIPT")/train_common.sh"
parse_args "$@"

N="$LAUNCH_SLOT"
RAY_ADDRESS="${RAY_ADDRESS:-}"
RAY_PORT="${RAY_PORT:-$((6379 + N))}"
RAY_DASHBOARD_PORT="${RAY_DASHBOARD_PORT:-$((8265 + N))}"
RAY_CLIENT_PORT="${RAY_CLIENT_PORT:-$((10001 - N))}"
RAY_AGENT_PORT="${RAY_AGENT_PORT:-$((52365 + N))}"
slot_workers=""; slot_tmp=""
if [ "$N" != 0 ]; then slot_workers="$((20000 + N * 1000))-$((20999 + N * 1000))"; slot_tmp="/tmp/ray_slot$N"; fi
RAY_WORKER_PORTS="${RAY_WORKER_PORTS:-$slot_workers}"
RAY_TEMP_DIR="${RAY_TEMP_DIR:-$slot_tmp}"
RAY_STOP_ON_EXIT="${RAY_STOP_ON_EXIT:-1}"
RAY_START_TIMEOUT="${RAY_START_TIMEOUT:-120}"
RAY_BIN="${RAY_BIN:-}"
USE_VLLM="${USE_VLLM:-auto}"
VLLM_ENGINES="${VLLM_ENGINES:-auto}"
VLLM_TP_SIZE="${VLLM_TP_SIZE:-1}"
REF_OFFLOAD="${REF_OFFLOAD:-0}"
whole_numbers VLLM_TP_SIZE
[ "$VLLM_ENGINES" = auto ] || whole_numbers VLLM_ENGINES

# Rollout engine: vLLM or HF generate, decided before the command is built (it sets the GPU split).
VLLM_WHY=""
case "$USE_VLLM" in
  auto)
    if [ "$GPUS" -lt 2 ]; then
      VLLM_WHY="GPUS=$GPUS, and OpenRLHF 0.5.7 gives each vLLM engine a GPU of its own (needs GPUS >= 2)"
    elif "$TRAIN_PYTHON" -c 'import vllm' >/dev/null 2>&1; then
      USE_VLLM=1
    else
      VLLM_WHY="\`import vllm\` fails in TRAIN_PYTHON=$TRAIN_PYTHON (bash scripts/setup_env.sh installs vllm 0.6.0)"
    fi
    [ "$USE_VLLM" = 1 ] || USE_VLLM=0 ;;
  0) VLLM_WHY="USE_VLLM=0" ;;
  1) ;;
  *) die 2 "USE_VLLM must be auto, 0 or 1 (got '$USE_VLLM')" ;;
esac
if [ "$USE_VLLM" = 1 ]; then
  if [ "$VLLM_ENGINES" = auto ]; then VLLM_ENGINES=$((GPUS / (2 * VLLM_TP_SIZE))); [ "$VLLM_ENGINES" -ge 1 ] || VLLM_ENGINES=1; fi
  ENGINES="$VLLM_ENGINES"
else
  ENGINES=0
fi
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

# layout: how the GPUs are used (and the HF generate warning when it applies).
layout() {
  if [ "$ENGINES" -gt 0 ]; then
    log "layout: $ACTOR_GPUS GPU(s) actor + reference (colocated), $ENGINES vLLM engine(s) x TP $VLLM_TP_SIZE on the other $((ENGINES * VLLM_TP_SIZE))"
  else
    log "layout: $ACTOR_GPUS GPU(s) actor + reference (colocated), generation with HF generate"
    hf_generate_warning "$VLLM_WHY" "$ACTOR_GPUS"
  fi
}

if [ "$DRY_RUN" = 1 ]; then
  log "command:"
  print_cmd "${SUBMIT[@]}" "${CMD[@]}"
  layout
  preflight openrlhf.cli.train_ppo_ray "${CMD[@]:3}"
  log "DRY_RUN=1: not launching"
  exit 0
fi

log "log file: $LOG_FILE"
run_logged print_cmd "${SUBMIT[@]}" "${CMD[@]}"
run_logged layout
run_logged preflight openrlhf.cli.train_ppo_ray "${CMD[@]:3}" || exit $?

RAY_PID=""
SUBMITTED=0
# shellcheck disable=SC2329  # invoked by the EXIT trap
cleanup() {
  local rc=$?
  if [ "$SUBMITTED" = 1 ] && [ "$rc" != 0 ]; then
    # Ctrl-C only stops `ray job submit` from tailing; the job itself would keep the GPUs.
    log "stopping Ray job $SUBMISSION_ID"
    "${RAY[@]}" job stop --address "$DASHBOARD" "$SUBMISSION_ID" >/dev/null 2>&1 || true
  fi
  if [ -n "$RAY_PID" ] && [ "$RAY_STOP_ON_EXIT" = 1 ]; then
    # `ray start --block` is the parent of this head's processes, which die with it (Ray's fate sharing).
    log "stopping the local Ray head this script started (pid $RAY_PID)"
    kill -TERM "$RAY_PID" 2>/dev/null || true
    wait "$RAY_PID" 2>/dev/null || true
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
    HEAD=(start --head --block --node-ip-address 127.0.0.1 --port "$RAY_PORT" --num-gpus "$GPUS"
          --dashboard-host 127.0.0.1 --dashboard-port "$RAY_DASHBOARD_PORT"
          --ray-client-server-port "$RAY_CLIENT_PORT" --dashboard-agent-listen-port "$RAY_AGENT_PORT"
          --disable-usage-stats)
    [ -n "$RAY_WORKER_PORTS" ] && HEAD+=(--min-worker-port "${RAY_WORKER_PORTS%-*}" --max-worker-port "${RAY_WORKER_PORTS#*-}")
    [ -n "$RAY_TEMP_DIR" ] && HEAD+=(--temp-dir "$RAY_TEMP_DIR")
    log "starting a local Ray head (127.0.0.1:$RAY_PORT, $GPUS GPUs, dashboard :$RAY_DASHBOARD_PORT${RAY_TEMP_DIR:+, $RAY_TEMP_DIR})"
    "${RAY[@]}" "${HEAD[@]}" >>"$LOG_FILE" 2>&1 &
    RAY_PID=$!
    waited=0
    until "${RAY[@]}" job list --address "$DASHBOARD" >/dev/null 2>&1; do
      kill -0 "$RAY_PID" 2>/dev/null || { RAY_PID=""; die 1 "ray start failed (see $LOG_FILE)"; }
      [ "$waited" -lt "$RAY_START_TIMEOUT" ] || die 1 "the Ray head's job API did not answer at $DASHBOARD in ${RAY_START_TIMEOUT}s (see $LOG_FILE)"
      sleep 2; waited=$((waited + 2))
    done
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
