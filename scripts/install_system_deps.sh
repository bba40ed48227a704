#!/usr/bin/env bash
# Install the Debian packages coderl needs when their commands are missing (apt-get, as root).
#
#   bash scripts/install_system_deps.sh [PACKAGE ...]   # default: bubblewrap libseccomp2
#
# Known packages and what proves they are there: bubblewrap (the bwrap command), libseccomp2 (libseccomp.so.2 in
# the linker cache: the sandbox's seccomp filter is generated with it), patch, git.
# Knobs (env vars):
#   INSTALL_SYSTEM_DEPS=auto  auto = install when root with apt-get, else report what is missing;
#                             never = only report
# Exit status: 0 everything present (or installed), 1 something is still missing.
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
LOG_TAG=install_system_deps
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

INSTALL_SYSTEM_DEPS="${INSTALL_SYSTEM_DEPS:-auto}"
[ "$#" -gt 0 ] || set -- bubblewrap libseccomp2

present() {
  case "$1" in
    bubblewrap) command -v bwrap >/dev/null 2>&1 ;;
    libseccomp2) ldconfig -p 2>/dev/null | grep -q 'libseccomp\.so\.2 ' ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

missing=()
for pkg in "$@"; do
  present "$pkg" || missing+=("$pkg")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$INSTALL_SYSTEM_DEPS" != never ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  printf '[system-deps] installing %s (apt-get)\n' "${missing[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
printf '[system-deps] missing: %s — install with: sudo apt-get install %s\n' "${missing[*]}" "${missing[*]}" >&2
exit 1
