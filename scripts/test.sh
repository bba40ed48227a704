#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then run pytest.
#
#   bash scripts/test.sh                 # whole suite
#   bash scripts/test.sh -k sandbox -x   # extra args go to pytest
#
# Knobs (env vars):
#   VENV=.venv             virtualenv to create/reuse (ignored with USE_CURRENT_ENV=1)
#   USE_CURRENT_ENV=0      1 = install into and test with the current python instead of a venv
#   PYTHON=python3         interpreter used to create the venv
#   TORCH_VERSION=2.13.0   CPU torch for importing OpenRLHF (an unpinned torch pulls GBs of CUDA)
#   OPENRLHF_VERSION=0.5.7 OpenRLHF release the patch tests run against (downloaded from PyPI)
#   SKIP_INSTALL=0         1 = trust the environment as it is and only run pytest
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=test.sh
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VENV:-.venv}"
USE_CURRENT_ENV="${USE_CURRENT_ENV:-0}"
PYTHON="${PYTHON:-python3}"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
OPENRLHF_VERSION="${OPENRLHF_VERSION:-0.5.7}"
SKIP_INSTALL="${SKIP_INSTALL:-0}"
CACHE_DIR="$ROOT/.cache"


# bubblewrap gives the sandbox real namespaces (the adversarial tests must run with it, not in the weaker
# rlimits-only fallback); GNU patch and git are what patches/apply_patches.sh and its tests drive.
bash scripts/install_system_deps.sh bubblewrap patch git \
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

if [ "$SKIP_INSTALL" != 1 ]; then
  log "installing CPU torch==$TORCH_VERSION, the OpenRLHF CPU stack and coderl[test,ray]"
  "$PY" -m pip install -q --disable-pip-version-check --upgrade pip
  "$PY" -m pip install -q --disable-pip-version-check "torch==$TORCH_VERSION"
  "$PY" -m pip install -q --disable-pip-version-check -e ".[test,ray,openrlhf-cpu,learning-check]" \
    "torch==$TORCH_VERSION"
fi

# The patch tests need the real OpenRLHF release source, not an installed copy: download the wheel once.
mkdir -p "$CACHE_DIR/openrlhf"
find_wheel() { find "$CACHE_DIR/openrlhf" -maxdepth 1 -name "openrlhf-$OPENRLHF_VERSION-*.whl" | head -n1; }
WHEEL="$(find_wheel)"
if [ -z "$WHEEL" ]; then
  log "downloading openrlhf==$OPENRLHF_VERSION from PyPI (--no-deps)"
  "$PY" -m pip download -q --disable-pip-version-check --no-deps "openrlhf==$OPENRLHF_VERSION" \
    -d "$CACHE_DIR/openrlhf"
  WHEEL="$(find_wheel)"
fi
export CODERL_OPENRLHF_WHEEL="$WHEEL"
# Tests call the venv's tools (shellcheck, ruff) by name.
PATH="$(dirname "$PY"):$PATH"
export PATH

log "running pytest"
exec "$PY" -m pytest "$@"
