#!/usr/bin/env bash
# shellcheck shell=bash
# Helpers every coderl shell script sources (never run): help text from the header comment, tagged
# messages, fatal errors. Set LOG_TAG before using them.

# usage [FILE]: FILE's header comment (line 2 up to `set -euo pipefail`) without the comment marks.
usage() { sed -n '2,/^set -euo/p' "${1:-$0}" | sed '$d' | sed 's/^# \{0,1\}//'; }
# say: progress a user reads on stdout; log: diagnostics on stderr.
say() { printf '[%s] %s\n' "${LOG_TAG:-coderl}" "$*"; }
log() { printf '[%s] %s\n' "${LOG_TAG:-coderl}" "$*" >&2; }
err() { printf '[%s] error: %s\n' "${LOG_TAG:-coderl}" "$*" >&2; }
# die CODE MESSAGE...: the error on stderr, then exit CODE.
die() { local code="$1"; shift; err "$*"; exit "$code"; }

# whole_numbers KNOB...: every env knob named that is set must be a whole number (else die 2, naming it).
whole_numbers() {
  local knob
  for knob in "$@"; do
    [[ -z ${!knob} || ${!knob} =~ ^[0-9]+$ ]] || die 2 "$knob must be a whole number (got '${!knob}')"
  done
}

# coderl_importable PYTHON: true when PYTHON can import coderl; where it is not installed (a bare GPU box),
# this checkout's coderl/ (links to its folders) is put on PYTHONPATH first.
coderl_importable() {
  "$1" -c 'import coderl.rewards' 2>/dev/null && return 0
  PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  export PYTHONPATH
  "$1" -c 'import coderl.rewards' 2>/dev/null
}

# missing_modules PYTHON MODULE...: the MODULEs PYTHON cannot find, comma-separated (empty when all are
# there); found without importing them, so asking about torch costs milliseconds.
missing_modules() {
  local py="$1"; shift
  "$py" - "$@" <<'EOF'
import importlib.util, sys
print(", ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))
EOF
}
