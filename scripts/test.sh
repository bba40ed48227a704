#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run pytest.
#
#   bash scripts/test.sh                 # whole suite
#   bash scripts/test.sh -k sandbox -x   # extra args go to pytest
#   bash scripts/test.sh --install-only  # install everything below (CPU torch, every extra), run no test:
#                                        # then .venv/bin/python runs the learning check, TRL on CPU, ...
#
# Knobs (env vars):
#   VENV=.venv             virtualenv to create/reuse (ignored with USE_CURRENT_ENV=1)
#   USE_CURRENT_ENV=0      1 = install into and test with the current python instead of a venv
#   PYTHON=python3         interpreter used to create the venv
#   TORCH_VERSION=2.13.0   CPU torch for importing OpenRLHF (an unpinned torch pulls GBs of CUDA)
#   TORCH_INDEX_URL=       where that torch comes from; empty = pip's configured indexes. PyPI's Linux torch is
#                          the CUDA build (GBs): on a machine whose pip has no CPU wheel source, set
#                          TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
#   OPENRLHF_VERSION=0.5.7 OpenRLHF release the patch tests run against (downloaded from PyPI)
#   OPENRLHF_LATEST_VERSION=0.11.2  newest OpenRLHF with a patch set (patches/<version>/), also downloaded
#   VERL_VERSION=0.9.1     verl the integration tests drive, installed --no-deps into .cache/verl-<version>
#   TRL_LATEST_VERSION=1.16.0  current TRL, installed --no-deps into .cache/trl-<version> with the newer
#                          transformers it needs (versions pinned here for 1.16.0); its test runs it in a subprocess
#   SKIP_INSTALL=0         1 = trust the environment as it is and only run pytest
#   REINSTALL=0            1 = run pip even where VENV holds a stamp of this very install (the stamp is
#                          written after a complete install and names pyproject.toml's hash, this checkout, torch
#                          and the extras: a re-run with none of them changed skips pip; USE_CURRENT_ENV never does)
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=test.sh
INSTALL_ONLY=0
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  --install-only) INSTALL_ONLY=1; shift ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VENV:-.venv}"
USE_CURRENT_ENV="${USE_CURRENT_ENV:-0}"
PYTHON="${PYTHON:-python3}"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
TORCH_INDEX_URL="${TORCH_INDEX_URL:-}"
OPENRLHF_VERSION="${OPENRLHF_VERSION:-0.5.7}"
OPENRLHF_LATEST_VERSION="${OPENRLHF_LATEST_VERSION:-0.11.2}"
VERL_VERSION="${VERL_VERSION:-0.9.1}"
TRL_LATEST_VERSION="${TRL_LATEST_VERSION:-1.16.0}"
SKIP_INSTALL="${SKIP_INSTALL:-0}"
REINSTALL="${REINSTALL:-0}"
CACHE_DIR="$ROOT/.cache"


# bubblewrap gives the sandbox real namespaces (the adversarial tests must run with it, not in the weaker
# rlimits-only fallback), libseccomp its seccomp filter; GNU patch and git are what patches/apply_patches.sh
# and its tests drive.
bash scripts/install_system_deps.sh bubblewrap libseccomp2 patch git \
  || { log "ERROR: install the packages above first (the sandbox and patch tests need them)"; exit 1; }

if [ "$USE_CURRENT_ENV" = 1 ]; then
  PY="$(command -v "$PYTHON")"
else
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating virtualenv $VENV"
    "$PYTHON" -m venv "$VENV"
  fi
  PY="$ROOT/$VENV/bin/python"
fi

EXTRAS="test,ray,openrlhf-cpu,learning-check,integrations"
# What a complete install of this stack into VENV is: re-running pip on it resolves ~30 s to change nothing.
STAMP=""
if [ "$USE_CURRENT_ENV" != 1 ]; then
  STAMP="$VENV/.coderl-test-install"
  STAMP_TEXT="$(sha256sum pyproject.toml | cut -d' ' -f1) root=$ROOT torch=$TORCH_VERSION index=$TORCH_INDEX_URL extras=$EXTRAS"
fi
if [ "$SKIP_INSTALL" != 1 ] && [ -n "$STAMP" ] && [ "$REINSTALL" != 1 ] && [ -f "$STAMP" ] \
    && [ "$(cat "$STAMP")" = "$STAMP_TEXT" ]; then
  log "$VENV already holds this install ($STAMP; REINSTALL=1 runs pip anyway)"
elif [ "$SKIP_INSTALL" != 1 ]; then
  log "installing CPU torch==$TORCH_VERSION, the OpenRLHF CPU stack and coderl[$EXTRAS]"
  if [ -n "$STAMP" ]; then rm -f "$STAMP"; fi
  "$PY" -m pip install -q --disable-pip-version-check --upgrade pip
  torch_index=()
  [ -n "$TORCH_INDEX_URL" ] && torch_index=(--index-url "$TORCH_INDEX_URL")
  "$PY" -m pip install -q --disable-pip-version-check "${torch_index[@]}" "torch==$TORCH_VERSION"
  "$PY" -m pip install -q --disable-pip-version-check -e ".[$EXTRAS]" "torch==$TORCH_VERSION"
  if [ -n "$STAMP" ]; then printf '%s\n' "$STAMP_TEXT" > "$STAMP"; fi
fi

if [ "$INSTALL_ONLY" = 1 ]; then  # the test-only downloads below (OpenRLHF wheels, verl, TRL 1.x) are skipped
  log "installed into $("$PY" -c 'import sys; print(sys.prefix)'): coderl[$EXTRAS] with CPU torch==$TORCH_VERSION (no tests run)"
  exit 0
fi

# The patch tests need the real OpenRLHF release source, not an installed copy: download the wheels once.
mkdir -p "$CACHE_DIR/openrlhf"
find_wheel() { find "$CACHE_DIR/openrlhf" -maxdepth 1 -name "openrlhf-$1-*.whl" | head -n1; }
openrlhf_wheel() {  # openrlhf_wheel VERSION: the cached wheel's path, downloaded first if needed
  if [ -z "$(find_wheel "$1")" ]; then
    log "downloading openrlhf==$1 from PyPI (--no-deps)"
    "$PY" -m pip download -q --disable-pip-version-check --no-deps "openrlhf==$1" -d "$CACHE_DIR/openrlhf"
  fi
  find_wheel "$1"
}
CODERL_OPENRLHF_WHEEL="$(openrlhf_wheel "$OPENRLHF_VERSION")"
CODERL_OPENRLHF_LATEST_WHEEL="$(openrlhf_wheel "$OPENRLHF_LATEST_VERSION")"
export CODERL_OPENRLHF_WHEEL CODERL_OPENRLHF_LATEST_WHEEL

# verl's own dependencies pin a GPU stack (vllm, newer torch): its reward path needs only these, kept off
# the venv's sys.path in their own directory (tests/conftest.py appends it).
CODERL_VERL_PATH="$CACHE_DIR/verl-$VERL_VERSION"
if [ ! -f "$CODERL_VERL_PATH/verl/__init__.py" ]; then
  log "installing verl==$VERL_VERSION and the packages its reward path imports into $CODERL_VERL_PATH (--no-deps)"
  "$PY" -m pip install -q --disable-pip-version-check --no-deps --target "$CODERL_VERL_PATH.tmp" \
    "verl==$VERL_VERSION" tensordict==0.10.0 pyvers==0.1.0 omegaconf==2.4.0 antlr4-python3-runtime==4.9.3 \
    codetiming==1.4.0 orjson==3.13.0 cloudpickle==3.1.2
  rm -rf "$CODERL_VERL_PATH"
  mv "$CODERL_VERL_PATH.tmp" "$CODERL_VERL_PATH"
fi
export CODERL_VERL_PATH

# The venv's TRL is 0.17, the last that runs on the pinned transformers 4.46.3. The current TRL needs a newer
# transformers, tokenizers, huggingface_hub (and what they pull in that the venv lacks): exactly these, in their own
# directory, which tests/rewards/integrations/test_trl_latest.py puts first on a subprocess's PYTHONPATH (torch, numpy,
# pyarrow... stay the venv's). Versions: what `pip install trl==1.16.0` resolved to, pinned.
CODERL_TRL_LATEST_PATH="$CACHE_DIR/trl-$TRL_LATEST_VERSION"
if [ ! -f "$CODERL_TRL_LATEST_PATH/trl/__init__.py" ]; then
  log "installing trl==$TRL_LATEST_VERSION and the newer transformers stack it needs into $CODERL_TRL_LATEST_PATH (--no-deps)"
  rm -rf "$CODERL_TRL_LATEST_PATH.tmp"
  "$PY" -m pip install -q --disable-pip-version-check --no-deps --target "$CODERL_TRL_LATEST_PATH.tmp" \
    "trl==$TRL_LATEST_VERSION" transformers==5.23.0 tokenizers==0.23.3 huggingface_hub==2.4.0 accelerate==1.15.0 \
    datasets==5.2.0 safetensors==0.8.0 fsspec==2026.9.0 httpx2==2.16.2 httpcore2==2.16.2 truststore==0.10.5 \
    typer==0.29.2 shellingham==1.5.4
  rm -rf "$CODERL_TRL_LATEST_PATH"
  mv "$CODERL_TRL_LATEST_PATH.tmp" "$CODERL_TRL_LATEST_PATH"
fi
export CODERL_TRL_LATEST_PATH
# Tests call the venv's tools (shellcheck, ruff) by name.
PATH="$(dirname "$PY"):$PATH"
export PATH

log "running pytest"
exec "$PY" -m pytest "$@"
