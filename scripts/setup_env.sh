#!/usr/bin/env bash
# Create the GPU training environment for coderl: the pinned stack, OpenRLHF at the pinned commit, our
# patches applied and verified. Idempotent and resumable: each finished step leaves a marker holding its
# pins, so a re-run skips what is done and redoes a step whose pins changed.
#
#   bash scripts/setup_env.sh            # create / complete the environment
#   bash scripts/setup_env.sh --check    # check prerequisites and print the plan; change nothing
#
# Pinned stack (vLLM 0.6.0 requires torch 2.4.0 and xformers 0.0.27.post2; OpenRLHF's own pins of
# deepspeed 0.15.0 / flash-attn are overridden: it is installed with --no-deps, flash-attn is left out):
#   Python 3.10, torch 2.4.0 (CUDA 12.1 wheels), xformers 0.0.27.post2, vllm 0.6.0, transformers 4.46.3,
#   deepspeed 0.16.4 (CPU Adam op prebuilt: DS_BUILD_CPU_ADAM=1), ray[default] 2.12.0, peft 0.13.2,
#   OpenRLHF 2db547e (git) or 0.5.7 (PyPI), coderl itself (fastapi, uvicorn, pyarrow, ...).
#
# Knobs (env vars):
#   ENV_KIND=auto          conda | venv | auto (conda when `conda` is on PATH, else venv)
#   ENV_NAME=coderl-gpu    conda env name              ENV_DIR=.venv-gpu   venv directory
#   PYTHON=python3.10      interpreter that creates the venv (must be 3.10)
#   OPENRLHF_SOURCE=git    git: clone OpenRLHF at OPENRLHF_COMMIT; pypi: pip install openrlhf==0.5.7 --no-deps
#   OPENRLHF_REPO=https://github.com/OpenRLHF/OpenRLHF.git  OPENRLHF_COMMIT=2db547e
#   OPENRLHF_DIR=.cache/OpenRLHF   where the clone goes (installed editable, then patched)
#   TORCH_INDEX_URL=https://download.pytorch.org/whl/cu121
#   MIN_DRIVER=525.60      oldest NVIDIA driver that runs CUDA 12.1 wheels
#   CONDA=conda  GIT=git  NVIDIA_SMI=nvidia-smi   the tools used (override to point at another install)
#   FORCE=0                1 = ignore the step markers and redo every step
#
# Exit codes: 0 ok, 1 a step failed, 2 usage, 3 no conda and no Python 3.10, 4 git missing,
# 5 no NVIDIA driver (nvidia-smi missing or failing), 6 driver older than MIN_DRIVER.
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=setup_env
CHECK_ONLY=0
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  --check) CHECK_ONLY=1 ;;
  "") ;;
  *) echo "setup_env: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ENV_KIND="${ENV_KIND:-auto}"
ENV_NAME="${ENV_NAME:-coderl-gpu}"
ENV_DIR="${ENV_DIR:-.venv-gpu}"
PYTHON="${PYTHON:-python3.10}"
OPENRLHF_SOURCE="${OPENRLHF_SOURCE:-git}"
OPENRLHF_REPO="${OPENRLHF_REPO:-https://github.com/OpenRLHF/OpenRLHF.git}"
OPENRLHF_COMMIT="${OPENRLHF_COMMIT:-2db547e}"
OPENRLHF_DIR="${OPENRLHF_DIR:-.cache/OpenRLHF}"
TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cu121}"
MIN_DRIVER="${MIN_DRIVER:-525.60}"
CONDA="${CONDA:-conda}"
GIT="${GIT:-git}"
NVIDIA_SMI="${NVIDIA_SMI:-nvidia-smi}"
FORCE="${FORCE:-0}"
case "$ENV_DIR" in /*) ;; *) ENV_DIR="$ROOT/$ENV_DIR" ;; esac
case "$OPENRLHF_DIR" in /*) ;; *) OPENRLHF_DIR="$ROOT/$OPENRLHF_DIR" ;; esac

# The pins, one place. Every pip call gets them as constraints, so no step can drift another's pin.
CONSTRAINTS="torch==2.4.0
xformers==0.0.27.post2
vllm==0.6.0
transformers==4.46.3
deepspeed==0.16.4
ray==2.12.0
peft==0.13.2"
OPENRLHF_DEPS=(accelerate bitsandbytes datasets einops isort jsonlines loralib optimum packaging peft
  "ray[default]" tensorboard torchmetrics tqdm transformers transformers-stream-generator wandb wheel)


# ---------------------------------------------------------------------------------- prerequisites
PROBLEM_CODE=0
problem() { printf '[setup_env] missing prerequisite: %s\n' "$2" >&2; [ "$PROBLEM_CODE" != 0 ] || PROBLEM_CODE="$1"; }

version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

check_prereqs() {
  if [ "$ENV_KIND" = auto ]; then
    if command -v "$CONDA" >/dev/null 2>&1; then ENV_KIND=conda; else ENV_KIND=venv; fi
  fi
  case "$ENV_KIND" in
    conda)
      command -v "$CONDA" >/dev/null 2>&1 || problem 3 "ENV_KIND=conda but '$CONDA' is not on PATH (install Miniconda or use ENV_KIND=venv)" ;;
    venv)
      if ! command -v "$PYTHON" >/dev/null 2>&1 || ! "$PYTHON" -c 'import sys' >/dev/null 2>&1; then
        problem 3 "no conda and no working '$PYTHON': install Python 3.10 (with venv) or Miniconda, or set PYTHON=/path/to/python3.10"
      elif ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 10))'; then
        problem 3 "PYTHON=$PYTHON is Python $("$PYTHON" -c 'import sys; print(sys.version.split()[0])'); the pinned stack (vLLM 0.6.0 wheels) needs 3.10: set PYTHON=python3.10 or use conda"
      elif ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        problem 3 "PYTHON=$PYTHON has no venv/ensurepip module (Debian/Ubuntu: apt install python3.10-venv)"
      fi ;;
    *) die 2 "ENV_KIND must be conda, venv or auto (got '$ENV_KIND')" ;;
  esac
  if [ "$OPENRLHF_SOURCE" = git ] && ! command -v "$GIT" >/dev/null 2>&1; then
    problem 4 "git ('$GIT') is needed to clone OpenRLHF at $OPENRLHF_COMMIT (or set OPENRLHF_SOURCE=pypi)"
  fi
  case "$OPENRLHF_SOURCE" in git|pypi) ;; *) die 2 "OPENRLHF_SOURCE must be git or pypi (got '$OPENRLHF_SOURCE')" ;; esac
  if ! command -v "$NVIDIA_SMI" >/dev/null 2>&1; then
    problem 5 "no NVIDIA driver: '$NVIDIA_SMI' not found (install the NVIDIA driver >= $MIN_DRIVER; CUDA 12.1 wheels need it)"
  else
    local drv
    if ! drv="$("$NVIDIA_SMI" --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')" || [ -z "$drv" ]; then
      problem 5 "'$NVIDIA_SMI' fails: the NVIDIA driver is not loaded or no GPU is visible"
    elif ! version_ge "$drv" "$MIN_DRIVER"; then
      problem 6 "NVIDIA driver $drv is older than $MIN_DRIVER, which CUDA 12.1 (torch 2.4.0+cu121) needs"
    else
      say "NVIDIA driver $drv, $("$NVIDIA_SMI" -L 2>/dev/null | wc -l) GPU(s)"
    fi
  fi
  if ! command -v nvcc >/dev/null 2>&1 && [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    say "note: no CUDA toolkit (nvcc/CUDA_HOME): DeepSpeed's CPU Adam op is then JIT-built on first use instead"
  fi
}

# ---------------------------------------------------------------------------------- steps
STEPS=(create_env torch vllm openrlhf_deps deepspeed openrlhf coderl patches verify)
declare -A WHAT=()
describe_steps() {
  local where="$ENV_DIR" src="openrlhf==0.5.7 from PyPI"
  [ "$ENV_KIND" = conda ] && where="conda env $ENV_NAME"
  [ "$OPENRLHF_SOURCE" = git ] && src="$OPENRLHF_REPO @ $OPENRLHF_COMMIT -> $OPENRLHF_DIR"
  WHAT=(
    [create_env]="create the $ENV_KIND environment ($where, Python 3.10)"
    [torch]="torch 2.4.0 from $TORCH_INDEX_URL"
    [vllm]="vllm 0.6.0 + xformers 0.0.27.post2"
    [openrlhf_deps]="transformers 4.46.3 and OpenRLHF's other dependencies (no flash-attn)"
    [deepspeed]="deepspeed 0.16.4 with DS_BUILD_CPU_ADAM=1 (--no-build-isolation)"
    [openrlhf]="OpenRLHF ($src), --no-deps"
    [coderl]="coderl itself (pip install -e .[ray]: fastapi, uvicorn, pyarrow, ...)"
    [patches]="bash patches/apply_patches.sh <OpenRLHF>"
    [verify]="versions, CUDA, CPU Adam op, group_norm in train_ppo_ray --help, memory estimate"
  )
}

env_python() {
  if [ "$ENV_KIND" = conda ]; then "$CONDA" run --no-capture-output -n "$ENV_NAME" python "$@"; else "$ENV_DIR/bin/python" "$@"; fi
}
pipi() { env_python -m pip install --disable-pip-version-check -c "$CONSTRAINTS_FILE" "$@"; }
marker_dir() {
  if [ "$ENV_KIND" = conda ]; then
    printf '%s/.coderl_setup\n' "$("$CONDA" run -n "$ENV_NAME" python -c 'import sys; print(sys.prefix)' 2>/dev/null || echo /nonexistent)"
  else
    printf '%s/.coderl_setup\n' "$ENV_DIR"
  fi
}
# A step is done when its marker holds the current pins and source settings.
stamp() { printf '%s|%s|%s|%s\n' "$CONSTRAINTS" "$OPENRLHF_SOURCE" "$OPENRLHF_COMMIT" "$TORCH_INDEX_URL" | cksum | cut -d' ' -f1; }
is_done() { [ "$FORCE" != 1 ] && [ -f "$(marker_dir)/$1.done" ] && [ "$(cat "$(marker_dir)/$1.done")" = "$(stamp)" ]; }
mark_done() { mkdir -p "$(marker_dir)"; stamp >"$(marker_dir)/$1.done"; }

openrlhf_target() {
  if [ "$OPENRLHF_SOURCE" = git ]; then
    (cd "$OPENRLHF_DIR" && pwd)
  else
    env_python -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("openrlhf").origin).parents[1])'
  fi
}

step_create_env() {
  if [ "$ENV_KIND" = conda ]; then
    "$CONDA" env list | awk '{print $1}' | grep -qx "$ENV_NAME" || "$CONDA" create -y -n "$ENV_NAME" python=3.10
  else
    [ -x "$ENV_DIR/bin/python" ] || "$PYTHON" -m venv "$ENV_DIR"
  fi
  env_python -m pip install --disable-pip-version-check -q --upgrade pip setuptools wheel
}
step_torch() { pipi torch==2.4.0 --index-url "$TORCH_INDEX_URL" --extra-index-url https://pypi.org/simple; }
step_vllm() { pipi vllm==0.6.0 xformers==0.0.27.post2 --extra-index-url "$TORCH_INDEX_URL"; }
step_openrlhf_deps() { pipi "${OPENRLHF_DEPS[@]}"; }
step_deepspeed() {
  env_python -m pip uninstall -y -q deepspeed >/dev/null 2>&1 || true
  DS_BUILD_CPU_ADAM=1 DS_BUILD_OPS=0 pipi --no-build-isolation --no-cache-dir deepspeed==0.16.4 \
    || { say "prebuilding the CPU Adam op failed (CUDA toolkit?); installing deepspeed with JIT ops instead"
         pipi --no-cache-dir deepspeed==0.16.4; }
}
step_openrlhf() {
  if [ "$OPENRLHF_SOURCE" = git ]; then
    if [ ! -d "$OPENRLHF_DIR/.git" ]; then
      mkdir -p "$(dirname "$OPENRLHF_DIR")"
      "$GIT" clone "$OPENRLHF_REPO" "$OPENRLHF_DIR"
    fi
    # A patched tree refuses a checkout; revert our patches first (a no-op on a clean tree).
    bash "$ROOT/patches/apply_patches.sh" "$OPENRLHF_DIR" --revert >/dev/null 2>&1 || true
    "$GIT" -C "$OPENRLHF_DIR" fetch --quiet origin || true
    "$GIT" -C "$OPENRLHF_DIR" checkout --quiet "$OPENRLHF_COMMIT"
    pipi --no-deps -e "$OPENRLHF_DIR"
  else
    pipi --no-deps openrlhf==0.5.7
  fi
}
step_coderl() { pipi -e "${ROOT}[ray]"; }
step_patches() {
  local target; target="$(openrlhf_target)"
  PYTHON="$(env_python -c 'import sys; print(sys.executable)')" VERIFY_HELP=1 \
    bash "$ROOT/patches/apply_patches.sh" "$target"
}
step_verify() {
  env_python - <<'EOF'
import importlib.metadata as md
import torch
want = {"torch": "2.4.0", "xformers": "0.0.27.post2", "vllm": "0.6.0", "transformers": "4.46.3",
        "deepspeed": "0.16.4", "ray": "2.12.0"}
bad = []
for pkg, ver in want.items():
    have = md.version(pkg)
    print(f"  {pkg:<13} {have}")
    if not have.startswith(ver):
        bad.append(f"{pkg} {have} != {ver}")
assert not bad, "; ".join(bad)
assert torch.cuda.is_available(), "torch.cuda.is_available() is False: driver / CUDA mismatch"
print(f"  CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s): {torch.cuda.get_device_name(0)}")
from deepspeed.ops.op_builder import CPUAdamBuilder
CPUAdamBuilder().load()
print("  DeepSpeed CPU Adam op: loads")
try:
    import flash_attn  # noqa: F401
    print("  note: flash-attn is installed; the launch scripts do not pass --flash_attn")
except ImportError:
    print("  flash-attn: absent (SDPA attention, as intended)")
EOF
  env_python -m openrlhf.cli.train_ppo_ray --help | grep -q group_norm \
    || die 1 "train_ppo_ray --help does not list group_norm: the patches are not active"
  say "  train_ppo_ray --help lists group_norm"
  env_python -m coderl.launch.preflight estimate --model Qwen/Qwen2.5-7B-Instruct --gpus 4 2>/dev/null
}

# ---------------------------------------------------------------------------------- main
check_prereqs
describe_steps
CONSTRAINTS_FILE="$(mktemp -t coderl-constraints.XXXXXX)"
trap 'rm -f "$CONSTRAINTS_FILE"' EXIT
printf '%s\n' "$CONSTRAINTS" >"$CONSTRAINTS_FILE"

say "plan ($ENV_KIND environment; pins: $(echo "$CONSTRAINTS" | tr '\n' ' '))"
i=0
for s in "${STEPS[@]}"; do
  i=$((i + 1))
  state="todo"
  if [ "$PROBLEM_CODE" = 0 ] && is_done "$s" 2>/dev/null; then state="done"; fi
  printf '[setup_env]   %d/%d %-14s %-5s %s\n' "$i" "${#STEPS[@]}" "$s" "$state" "${WHAT[$s]}"
done
if [ "$PROBLEM_CODE" != 0 ]; then die "$PROBLEM_CODE" "fix the prerequisite(s) above and re-run"; fi
if [ "$CHECK_ONLY" = 1 ]; then say "--check: prerequisites ok; nothing changed"; exit 0; fi

i=0
for s in "${STEPS[@]}"; do
  i=$((i + 1))
  if [ "$s" != verify ] && is_done "$s"; then say "[$i/${#STEPS[@]}] $s: already done"; continue; fi
  say "[$i/${#STEPS[@]}] $s: ${WHAT[$s]}"
  start=$SECONDS
  "step_$s" || die 1 "step '$s' failed; fix it and re-run: finished steps are skipped"
  mark_done "$s"
  say "[$i/${#STEPS[@]}] $s: ok ($((SECONDS - start))s)"
done

if [ "$ENV_KIND" = conda ]; then ACTIVATE="conda activate $ENV_NAME"; else ACTIVATE="source $ENV_DIR/bin/activate"; fi
cat <<EOF
[setup_env] environment ready. Next:
  $ACTIVATE
  python data/preprocess.py --input_dir /path/to/parquet --output_dir data_out --verify
  python rewards/reward_server.py --data_path data_out/train.jsonl --port 5000     # terminal 1
  DRY_RUN=1 bash scripts/train_grpo_7b_zero2.sh && bash scripts/train_grpo_7b_zero2.sh   # terminal 2
EOF
