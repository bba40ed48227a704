#!/usr/bin/env bash
# GPU readiness check before a long run (<= 5 minutes): builds a small random-weight model from MODEL's own
# config (SMOKE_LAYERS layers, the real tokenizer), starts the reward server on DATA, runs 2 GRPO steps
# through the real launch script(s), then checks that rewards flowed (server /metrics), group_norm metrics
# were logged, the model was saved and reloads, and prints a PASS/FAIL table with timings, generation
# tokens/s and peak memory next to the memory plan (PLAN_JSON per path, for plan-vs-measured).
#
#   bash scripts/gpu_smoke.sh                       # Ray path (scripts/train_grpo_7b_zero2.sh)
#   SINGLE_NODE=1 bash scripts/gpu_smoke.sh         # single-node path (deepspeed launcher)
#   DRY_RUN=1 bash scripts/gpu_smoke.sh             # CPU: config + real server + real preflight/plan, no training
#
# Runs beside another reward server (own PORT) and another Ray head (own LAUNCH_SLOT).
#
# Knobs (env vars):
#   MODEL=Qwen/Qwen2.5-7B-Instruct   the target model (local dir or HF id): config + tokenizer are used
#   DATA=data_out/train.jsonl        the user's train.jsonl
#   GPUS=1                           GPUs for the smoke run
#   SINGLE_NODE=0                    1 = scripts/train_grpo_7b_zero2_single_node.sh instead of the Ray script
#   SMOKE_LAYERS=2                   decoder layers of the small model (other sizes: MODEL's)
#   SMOKE_DIR=/tmp/coderl_smoke      small model, run dir, logs, plan_<path>.json, summary.json
#   PORT=5055                        the smoke's own reward server (another one may hold 5000)
#   LAUNCH_SLOT=5                    passed to the launch script: Ray ports / master port of their own
#   STEP_TIMEOUT=270                 seconds for the training launch
#   TRAIN_PYTHON=python3             interpreter of the GPU env
#   DRY_RUN=0                        1 = no model weights, no training (works without a GPU, but
#                                    TRAIN_PYTHON needs torch + transformers, e.g. the test venv, MODEL's
#                                    config must be local or downloadable, and without OpenRLHF installed
#                                    add PREFLIGHT_SKIP=openrlhf)
# Exit code: 0 when every check passes, 1 otherwise, 2 on bad usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; fi
[ $# -eq 0 ] || { echo "[smoke] unknown argument $1: every knob is an env var (--help)" >&2; exit 2; }

MODEL="${MODEL:-Qwen/Qwen2.5-7B-Instruct}"
DATA="${DATA:-data_out/train.jsonl}"
GPUS="${GPUS:-1}"
SINGLE_NODE="${SINGLE_NODE:-0}"
SMOKE_LAYERS="${SMOKE_LAYERS:-2}"
SMOKE_DIR="${SMOKE_DIR:-/tmp/coderl_smoke}"
PORT="${PORT:-5055}"
LAUNCH_SLOT="${LAUNCH_SLOT:-5}"
STEP_TIMEOUT="${STEP_TIMEOUT:-270}"
TRAIN_PYTHON="${TRAIN_PYTHON:-python3}"
DRY_RUN="${DRY_RUN:-0}"

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=smoke
coderl_importable "$TRAIN_PYTHON" || { log "TRAIN_PYTHON=$TRAIN_PYTHON cannot import coderl (pip install -e .)"; exit 2; }
[ -f "$DATA" ] || { log "DATA=$DATA not found (python data/preprocess.py writes it)"; exit 2; }
missing="$(missing_modules "$TRAIN_PYTHON" torch transformers)"
[ -z "$missing" ] || {
  log "TRAIN_PYTHON=$TRAIN_PYTHON cannot import $missing: use the GPU env (bash scripts/setup_env.sh);"
  log "on a CPU (DRY_RUN=1) the test venv has them: bash scripts/test.sh, then TRAIN_PYTHON=.venv/bin/python"
  exit 2
}
DATA="$(cd "$(dirname "$DATA")" && pwd)/$(basename "$DATA")"
if [ "$SINGLE_NODE" = 1 ]; then WHICH=single; LAUNCH="$ROOT/scripts/train_grpo_7b_zero2_single_node.sh"
else WHICH=ray; LAUNCH="$ROOT/scripts/train_grpo_7b_zero2.sh"; fi
mkdir -p "$SMOKE_DIR"
SMALL="$SMOKE_DIR/model_small"; RUN="$SMOKE_DIR/run_$WHICH"; PLAN="$SMOKE_DIR/plan_$WHICH.json"
rm -rf "$RUN"
RESULTS="$SMOKE_DIR/results_$WHICH.tsv"; : >"$RESULTS"
T0=$SECONDS
# result NAME PASS|FAIL|DRY DETAIL: one row of the table.
result() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$((SECONDS - T0))" "$3" >>"$RESULTS"; log "$2 $1: $3"; }

SRV=""; MEM=""
# shellcheck disable=SC2329  # invoked by the EXIT trap
cleanup() {
  [ -n "$MEM" ] && kill "$MEM" 2>/dev/null || true
  [ -n "$SRV" ] && { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; } || true
}
trap cleanup EXIT

# 1. The small model: MODEL's config with SMOKE_LAYERS layers, random bf16 weights, MODEL's tokenizer.
if out=$(SMALL="$SMALL" SRC="$MODEL" LAYERS="$SMOKE_LAYERS" DRY="$DRY_RUN" "$TRAIN_PYTHON" - 2>&1 <<'EOF'
import os
import torch
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
cfg = AutoConfig.from_pretrained(os.environ["SRC"])
cfg.num_hidden_layers = int(os.environ["LAYERS"])
if os.environ["DRY"] == "1":  # no weights: the plan only needs the config
    os.makedirs(os.environ["SMALL"], exist_ok=True)
    cfg.save_pretrained(os.environ["SMALL"])
    with torch.device("meta"):
        n = sum(p.numel() for p in AutoModelForCausalLM.from_config(cfg).parameters())
else:
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):  # a 152k vocab inits slowly on CPU
        m = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16)
    n = sum(p.numel() for p in m.parameters())
    m.save_pretrained(os.environ["SMALL"], safe_serialization=True)
AutoTokenizer.from_pretrained(os.environ["SRC"]).save_pretrained(os.environ["SMALL"])  # the plan reads prompts
print(f"{n / 1e6:.1f}M params, {cfg.num_hidden_layers} layers, vocab {cfg.vocab_size}")
EOF
); then result model PASS "$(tail -1 <<<"$out") -> $SMALL"; MODEL_OK=1
else result model FAIL "$(grep -v '^[[:space:]]*$' <<<"$out" | tail -1)"; MODEL_OK=0; fi  # the exception line

# 2.-4. need the small model.
if [ "$MODEL_OK" = 1 ]; then
# 2. The reward server on the user's data.
"$TRAIN_PYTHON" "$ROOT/rewards/reward_server.py" --data_path "$DATA" --port "$PORT" \
  --reward_log "$SMOKE_DIR/rewards.jsonl" >"$SMOKE_DIR/server.log" 2>&1 &
SRV=$!
up=0
for _ in $(seq 60); do
  if curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then up=1; break; fi
  kill -0 "$SRV" 2>/dev/null || break
  sleep 1
done
if [ "$up" = 1 ]; then result reward_server PASS "http://127.0.0.1:$PORT ($(curl -s "http://127.0.0.1:$PORT/health" | head -c 120))"
else result reward_server FAIL "not up in 60 s: $(tail -2 "$SMOKE_DIR/server.log" | tr '\n' ' ')"; fi
queries() { { curl -s "http://127.0.0.1:$PORT/metrics" || true; } | awk '/^coderl_queries_total /{print int($2)}'; }
Q0=$(queries); Q0="${Q0:-0}"

# 3. Two GRPO steps through the real launch script (8 prompts x 4 samples, train batch 16).
if command -v nvidia-smi >/dev/null 2>&1 && [ "$DRY_RUN" != 1 ]; then
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 >"$SMOKE_DIR/gpumem_$WHICH.csv" 2>/dev/null &
  MEM=$!
fi
t=$SECONDS
set +e
env MODEL="$SMALL" DATA="$DATA" GPUS="$GPUS" SAVE_DIR="$RUN" RUN_NAME=smoke TRAIN_PYTHON="$TRAIN_PYTHON" \
  REWARD_URL="http://127.0.0.1:$PORT/get_reward" LAUNCH_SLOT="$LAUNCH_SLOT" PLAN_JSON="$PLAN" DRY_RUN="$DRY_RUN" \
  N_SAMPLES=4 ROLLOUT_BATCH_SIZE=8 MICRO_ROLLOUT_BATCH_SIZE=8 TRAIN_BATCH_SIZE=16 MICRO_TRAIN_BATCH_SIZE=4 \
  GENERATE_MAX_LEN=128 MAX_SAMPLES=8 SAVE_STEPS=-1 PREFLIGHT_SKIP="${PREFLIGHT_SKIP:-}" \
  timeout "$STEP_TIMEOUT" bash "$LAUNCH" >"$SMOKE_DIR/train_$WHICH.log" 2>&1
rc=$?
set -e
secs=$((SECONDS - t))
[ -n "$MEM" ] && { kill "$MEM" 2>/dev/null || true; MEM=""; }
if [ "$rc" = 0 ]; then result "train_$WHICH" "$([ "$DRY_RUN" = 1 ] && echo DRY || echo PASS)" "rc 0 in ${secs}s ($LAUNCH)"
else result "train_$WHICH" FAIL "rc $rc in ${secs}s: $(grep -a -m3 'FAIL\|Error' "$SMOKE_DIR/train_$WHICH.log" | tr '\n' ' ')"; fi
if [ -f "$PLAN" ]; then
  peaks=$("$TRAIN_PYTHON" -c 'import json, sys; p = json.load(open(sys.argv[1])); print("gpu_peak_gib", p["gpu_peak_gib"], "host_peak_gib", p["host_peak_gib"])' "$PLAN")
  result plan PASS "$peaks ($PLAN)"
else result plan FAIL "no $PLAN (preflight did not reach the memory plan)"; fi

# 4. What the run must have produced.
Q1=$(queries); Q1="${Q1:-0}"; QN=$((Q1 - Q0))
# Mean generated length per sample, from OpenRLHF's progress bars (tqdm: glen=… / response_length=…).
GLEN=$(grep -aoE "(glen|response_length)=[0-9.e+-]+" "$SMOKE_DIR/train_$WHICH.log" \
  | awk -F= '{s+=$2+0; n++} END{if(n) printf "%.1f", s/n}' || true)
if [ "$DRY_RUN" = 1 ]; then
  result rewards_flowed DRY "not trained (DRY_RUN=1); the preflight's probe scored $QN query(ies)"
  result group_norm_logged DRY "not trained (DRY_RUN=1)"
  result model_reloads DRY "not trained (DRY_RUN=1)"
else
  if [ "$QN" -gt 0 ]; then result rewards_flowed PASS "$QN queries scored (server /metrics)"
  else result rewards_flowed FAIL "0 queries reached the reward server"; fi
  if grep -aq "group_norm_fallback_frac" "$SMOKE_DIR/train_$WHICH.log" \
     || grep -raq "group_norm_fallback_frac" "$RUN/tensorboard" 2>/dev/null; then
    result group_norm_logged PASS "group_norm_fallback_frac in the log / tensorboard"
  else result group_norm_logged FAIL "no group_norm_fallback_frac in the log or tensorboard (patches applied?)"; fi
  if out=$("$TRAIN_PYTHON" -c 'import sys; from transformers import AutoModelForCausalLM, AutoTokenizer
m = AutoModelForCausalLM.from_pretrained(sys.argv[1]); AutoTokenizer.from_pretrained(sys.argv[1])
print(sum(p.numel() for p in m.parameters()))' "$RUN/model" 2>&1); then
    result model_reloads PASS "$RUN/model reloads ($(tail -1 <<<"$out") params)"
  else result model_reloads FAIL "$RUN/model: $(tail -1 <<<"$out")"; fi
fi
if [ -n "$GLEN" ] && [ "$secs" -gt 0 ]; then
  result generation_tokens_per_s INFO "$(awk -v q="$QN" -v g="$GLEN" -v s="$secs" 'BEGIN{printf "%.0f tokens/s end to end (%d samples x %.1f mean tokens / %d s incl. start-up)", q*g/s, q, g, s}')"
fi
if [ -s "$SMOKE_DIR/gpumem_$WHICH.csv" ]; then
  result peak_gpu INFO "$(sort -n "$SMOKE_DIR/gpumem_$WHICH.csv" | tail -1) MiB (nvidia-smi, 0.5 s samples; plan above)"
fi
else result "train_$WHICH" FAIL "not started: no small model"; fi

# 5. The table; summary.json for scripts.
fails=$(awk -F'\t' '$2=="FAIL"{n++} END{print n+0}' "$RESULTS")
printf '\n%-26s %-5s %6s  %s\n' CHECK RESULT T+s DETAIL
awk -F'\t' '{printf "%-26s %-5s %6s  %s\n", $1, $2, $3, $4}' "$RESULTS"
verdict=$([ "$fails" = 0 ] && echo PASS || echo FAIL)
printf '\nSMOKE %s (%s path, %d s%s)\n' "$verdict" "$WHICH" "$((SECONDS - T0))" "$([ "$DRY_RUN" = 1 ] && echo ', DRY_RUN: nothing trained')"
"$TRAIN_PYTHON" - "$RESULTS" "$SMOKE_DIR/summary_$WHICH.json" "$verdict" <<'EOF'
import json, os, sys
rows = [dict(zip(("check", "result", "t_s", "detail"), line.rstrip("\n").split("\t"))) for line in open(sys.argv[1])]
tmp = sys.argv[2] + ".tmp"
with open(tmp, "w") as f:
    json.dump({"verdict": sys.argv[3], "checks": rows}, f, indent=2)
os.replace(tmp, sys.argv[2])
EOF
[ "$fails" = 0 ]
