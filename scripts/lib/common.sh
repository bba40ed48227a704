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
