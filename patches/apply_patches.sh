#!/usr/bin/env bash
# Apply coderl's OpenRLHF patches to an OpenRLHF source tree, the set made for its release, in order:
# patches/0*.patch for 0.5.7 / commit 2db547e, patches/<release>/0*.patch for a newer release (0.11.2).
# The release is recognised by the sha256 of the files its set touches (patched or not), never by name.
#
#   bash patches/apply_patches.sh TARGET            apply (a no-op that says so when already applied)
#   bash patches/apply_patches.sh TARGET --check    dry run: report what would happen, change nothing
#   bash patches/apply_patches.sh TARGET --revert   restore the patched files byte-for-byte
#   add --force to work on a tree that is not a known OpenRLHF (0.5.7, commit 2db547e, 0.11.2), or to
#   complete a partially applied one (an unknown tree gets the set that fits it best)
#
# TARGET is an OpenRLHF git checkout or any directory that contains the `openrlhf/` package
# (e.g. .../site-packages). Nothing is written unless every hunk of every patch applies and the patched
# modules compile; a failed hunk is named (patch, file, hunk) and the tree is left untouched.
# After applying, `python -m openrlhf.cli.train_ppo_ray --help` must list group_norm (run with TARGET on
# PYTHONPATH, when OpenRLHF's dependencies are importable).
#
# Knobs (env vars):
#   PYTHON=python3        interpreter for the compile check and the --help check
#   PATCH_BIN=patch       GNU patch
#   PATCH_FUZZ=2          fuzz allowed with --force only (known trees must apply exactly, fuzz 0)
#   VERIFY_HELP=auto      auto: run the --help check, skip it when OpenRLHF's deps are missing;
#                         1: a missing dependency is an error; 0: no --help check
#   VERIFY_TIMEOUT=300    seconds allowed for the --help check
#   PATCHES_DIR=          use only the 0*.patch files of this directory (default: pick the set by fingerprint)
#
# Exit status: 0 done / nothing to do, 1 a patch, compile or verify step failed, 2 bad usage or unknown
# tree, 3 partially applied tree (reported, not touched).
set -euo pipefail

# shellcheck source=scripts/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/common.sh"
LOG_TAG=apply_patches

PYTHON="${PYTHON:-python3}"
# The checks run from other directories: pin a relative interpreter path (e.g. .venv/bin/python) now.
case "$PYTHON" in */*) PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")" ;; esac
PATCH_BIN="${PATCH_BIN:-patch}"
PATCH_FUZZ="${PATCH_FUZZ:-2}"
VERIFY_HELP="${VERIFY_HELP:-auto}"
VERIFY_TIMEOUT="${VERIFY_TIMEOUT:-300}"
PATCHES_DIR="${PATCHES_DIR:-}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# sha256 of the pristine files the patches touch, per known OpenRLHF version. 0.5.7 (PyPI) is 2db547e
# plus two vLLM weight-sync commits, so only train_ppo_ray.py and vllm_engine.py differ.
FINGERPRINTS="
0.5.7 75af0a5faf32ae029de76ab846601b959f2d94f95f9d905099bf2e7c2140dc8b openrlhf/cli/train_ppo.py
0.5.7 3dd254d7ab251b1975eb25d769a76a7e022fa095135b0455bbbf81d56930b385 openrlhf/cli/train_ppo_ray.py
0.5.7 c0ac7585c58ee47e25ee1e4bdd94da7a1e09443b782e99b2481dfdaa98c827fd openrlhf/models/actor.py
0.5.7 8179d8366de3c0e66a6c35b280e5fe30c596662040c50c31947cffefbc8a653f openrlhf/models/model.py
0.5.7 48ee3fd0d02d76b5fa3a7886b3f78b8c623d54b632d93cf66dfbc8a7536dc8a2 openrlhf/models/utils.py
0.5.7 f02fa622bc8397cc58047eab84c5816a794b9b98af381f0f72ae3320f56e9219 openrlhf/trainer/dpo_trainer.py
0.5.7 f49dce3655c3039e4a34bd57e8b5f2ba2ca891adbb1ccccedd9aaba08a7c40cb openrlhf/trainer/ppo_trainer.py
0.5.7 920e2d91fd2fc0eefcf334d3acd3db1414339b2fc0ab82756680c5022c6e129d openrlhf/trainer/ppo_utils/experience_maker.py
0.5.7 7a2b8bec68e015c04711836056f522a1b0c1b82a44bff425f7d1b87a0f799552 openrlhf/trainer/ray/vllm_engine.py
0.5.7 38cd0b7a71435f339ab4dc0751d5b103cdf84a4a7ae018a2ee94705af081735f openrlhf/utils/deepspeed/deepspeed.py
2db547e 75af0a5faf32ae029de76ab846601b959f2d94f95f9d905099bf2e7c2140dc8b openrlhf/cli/train_ppo.py
2db547e 2d1e39a8f52dd5e81d40004d0ad29049f752ae9251c37df3ca6a678b6c314fc8 openrlhf/cli/train_ppo_ray.py
2db547e c0ac7585c58ee47e25ee1e4bdd94da7a1e09443b782e99b2481dfdaa98c827fd openrlhf/models/actor.py
2db547e 8179d8366de3c0e66a6c35b280e5fe30c596662040c50c31947cffefbc8a653f openrlhf/models/model.py
2db547e 48ee3fd0d02d76b5fa3a7886b3f78b8c623d54b632d93cf66dfbc8a7536dc8a2 openrlhf/models/utils.py
2db547e f02fa622bc8397cc58047eab84c5816a794b9b98af381f0f72ae3320f56e9219 openrlhf/trainer/dpo_trainer.py
2db547e f49dce3655c3039e4a34bd57e8b5f2ba2ca891adbb1ccccedd9aaba08a7c40cb openrlhf/trainer/ppo_trainer.py
2db547e 920e2d91fd2fc0eefcf334d3acd3db1414339b2fc0ab82756680c5022c6e129d openrlhf/trainer/ppo_utils/experience_maker.py
2db547e 24f469b9a1ab6a6f91e134d409becf258b7a2517e4668541525a4063e7dd7463 openrlhf/trainer/ray/vllm_engine.py
2db547e 38cd0b7a71435f339ab4dc0751d5b103cdf84a4a7ae018a2ee94705af081735f openrlhf/utils/deepspeed/deepspeed.py
0.11.2 a57da6a94a193645c653c39a19808d7a408ed3302b076c637778770d268096ab openrlhf/cli/train_ppo_ray.py
0.11.2 1defeef7fa22fc8ff6621d76f5a042a57ebfff4f83aa0338ef9a397de8f8563f openrlhf/trainer/ppo_utils/experience_maker.py
"
KNOWN="$(printf '%s\n' "$FINGERPRINTS" | awk 'NF { print $1 }' | uniq | paste -sd' ')"


# ---------------------------------------------------------------------------------------------- args
MODE=apply
FORCE=0
TARGET=""
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage; exit 0 ;;
    --check) [ "$MODE" = apply ] || die 2 "--check and --revert exclude each other"; MODE=check ;;
    --revert) [ "$MODE" = apply ] || die 2 "--check and --revert exclude each other"; MODE=revert ;;
    --force) FORCE=1 ;;
    -*) die 2 "unknown option '$arg' (see --help)" ;;
    *) [ -z "$TARGET" ] || die 2 "only one TARGET allowed, got '$TARGET' and '$arg'"; TARGET="$arg" ;;
  esac
done
[ -n "$TARGET" ] || { usage >&2; die 2 "missing TARGET (an OpenRLHF checkout or a directory containing openrlhf/)"; }
[ -d "$TARGET" ] || die 2 "TARGET '$TARGET' is not a directory"
ROOT="$(cd "$TARGET" && pwd)"
if [ ! -f "$ROOT/openrlhf/__init__.py" ]; then
  if [ -f "$ROOT/__init__.py" ] && [ -d "$ROOT/trainer" ]; then
    die 2 "'$ROOT' looks like the openrlhf package itself: pass its parent directory"
  fi
  # An unpacked wheel (`pip download openrlhf==X --no-deps` + unzip) keeps the package under *.data/purelib/.
  for purelib in "$ROOT"/openrlhf-*.data/purelib; do
    [ -f "$purelib/openrlhf/__init__.py" ] && die 2 "no openrlhf/ package in '$ROOT', but this is an unpacked wheel: pass '$purelib'"
  done
  die 2 "no openrlhf/ package in '$ROOT': pass an OpenRLHF checkout root or the site-packages that holds openrlhf/"
fi
case "$VERIFY_HELP" in auto|0|1) ;; *) die 2 "VERIFY_HELP must be auto, 0 or 1 (got '$VERIFY_HELP')" ;; esac
[[ "$("$PATCH_BIN" --version 2>/dev/null || true)" == *"GNU patch"* ]] \
  || die 2 "GNU patch not found as '$PATCH_BIN' (apt-get install patch, or set PATCH_BIN)"
FUZZ=0
[ "$FORCE" = 0 ] || FUZZ="$PATCH_FUZZ"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/coderl-patches.XXXXXX")"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

# ------------------------------------------------------------------------- one patch set
# load_set DIR: split DIR's patches into one unit per file, find each unit's state in TARGET and which
# known OpenRLHF TARGET is (VERSION, empty if none). A unit is the part of one patch that touches one
# file; states are tracked per unit so that a tree where only some files of a patch were patched is
# recognised rather than made worse. Returns 1 (MISSING set) when TARGET lacks a file the set touches.
load_set() {
  local dir="$1" p name before part path f i v ok want have
  SET_DIR="$dir"; SET_WORK="$WORK/set$((++SET_SEQ))"
  shopt -s nullglob
  PATCHES=("$dir"/0[0-9][0-9][0-9]-*.patch)
  shopt -u nullglob
  [ "${#PATCHES[@]}" -gt 0 ] || die 2 "no patches (0NNN-*.patch) in $dir"
  UNIT_FILE=(); UNIT_PATCH=(); UNIT_PATH=()  # the unit's diff, its patch's name, the file it patches
  n=0
  for p in "${PATCHES[@]}"; do
    name="$(basename "$p")"
    before=$n
    while IFS= read -r part; do
      path="$(awk '/^\+\+\+ b\// { sub(/^\+\+\+ b\//, ""); sub(/[ \t].*/, ""); print; exit }' "$part")"
      [ -n "$path" ] || die 2 "$name: a 'diff --git' section without a '+++ b/<path>' line"
      UNIT_FILE+=("$part"); UNIT_PATCH+=("$name"); UNIT_PATH+=("$path")
      n=$((n + 1))
    done < <(awk -v dir="$SET_WORK/units" -v stem="$name" '
        BEGIN { system("mkdir -p \"" dir "\"") }
        /^diff --git / { k++; f = sprintf("%s/%s.%02d.diff", dir, stem, k); print f }
        k > 0 { print > f }' "$p")
    [ "$n" -gt "$before" ] || die 2 "$name: no 'diff --git' sections found"
  done
  mapfile -t FILES < <(printf '%s\n' "${UNIT_PATH[@]}" | sort -u)
  MISSING=()
  for f in "${FILES[@]}"; do [ -f "$ROOT/$f" ] || MISSING+=("$f"); done
  [ "${#MISSING[@]}" = 0 ] || return 1

  STAGE="$SET_WORK/stage"
  stage "$STAGE"
  STATE=(); FWD_OUT=()  # STATE: applied | pending | conflict
  n_applied=0; n_pending=0; n_conflict=0
  for i in "${!UNIT_FILE[@]}"; do
    if run_patch "$STAGE" "$i" -R --dry-run >/dev/null 2>&1; then
      STATE[i]=applied; n_applied=$((n_applied + 1)); FWD_OUT[i]=""
    elif out="$(run_patch "$STAGE" "$i" --dry-run 2>&1)"; then
      STATE[i]=pending; n_pending=$((n_pending + 1)); FWD_OUT[i]=""
    else
      STATE[i]=conflict; n_conflict=$((n_conflict + 1)); FWD_OUT[i]="$out"
    fi
  done

  # Which OpenRLHF is this, judged on its pristine files: reverse the applied units in a copy and
  # fingerprint the result, so a patched tree is recognised too.
  PRISTINE="$SET_WORK/pristine"
  stage "$PRISTINE"
  for ((i = ${#UNIT_FILE[@]} - 1; i >= 0; i--)); do
    if [ "${STATE[i]}" = applied ]; then
      run_patch "$PRISTINE" "$i" -R >/dev/null 2>&1 || die 1 "${UNIT_PATCH[$i]}: ${UNIT_PATH[$i]}: reverse dry run passed but reversing failed"
    fi
  done
  VERSION=""
  for v in $KNOWN; do
    # a release is judged only by a set made for it: its fingerprints cover exactly the set's files
    [ "$(printf '%s\n' "$FINGERPRINTS" | awk -v v="$v" '$1 == v { print $3 }' | sort)" \
      = "$(printf '%s\n' "${FILES[@]}")" ] || continue
    ok=1
    for f in "${FILES[@]}"; do
      want="$(printf '%s\n' "$FINGERPRINTS" | awk -v v="$v" -v f="$f" '$1 == v && $3 == f { print $2 }')"
      have="$(sha256sum "$PRISTINE/$f" | cut -c1-64)"
      [ "$want" = "$have" ] || { ok=0; break; }
    done
    if [ "$ok" = 1 ]; then VERSION="$v"; return 0; fi
  done
}

stage() {  # stage DIR: copy the files the patches touch from ROOT into DIR
  local d="$1" f
  for f in "${FILES[@]}"; do
    mkdir -p "$d/$(dirname "$f")"
    cp "$ROOT/$f" "$d/$f"
  done
}

run_patch() {  # run_patch DIR UNIT_INDEX [patch options...]: apply one unit inside DIR
  local d="$1" i="$2"
  shift 2
  "$PATCH_BIN" -d "$d" -p1 -f --fuzz="$FUZZ" --no-backup-if-mismatch -r - "$@" < "${UNIT_FILE[$i]}"
}

explain_failure() {  # explain_failure UNIT_INDEX PATCH_OUTPUT: name the patch, file and failed hunks
  local i="$1" out="$2" num at hdr found=0
  while read -r num at; do
    found=1
    hdr="$(grep -m "$num" '^@@' "${UNIT_FILE[$i]}" | tail -n1)"
    err "${UNIT_PATCH[$i]}: ${UNIT_PATH[$i]}: hunk #$num ($hdr) does not apply (expected near line $at)"
  done < <(printf '%s\n' "$out" | sed -n 's/^Hunk #\([0-9]*\) FAILED at \([0-9]*\).*/\1 \2/p')
  if [ "$found" = 0 ]; then
    err "${UNIT_PATCH[$i]}: ${UNIT_PATH[$i]}: $(printf '%s' "$out" | tail -n3 | tr '\n' ' ')"
  fi
}

# ------------------------------------------------------------------ pick the set for this tree
declared=""  # the version the tree says it is: a hint for unknown trees only, never trusted alone
dist_version=""
if [ -f "$ROOT/version.txt" ]; then
  declared="$(head -c 40 "$ROOT/version.txt" | tr -d '[:space:]')"
  dist_version="version.txt says $declared"
else
  for meta in "$ROOT"/openrlhf-*.dist-info/METADATA; do
    if [ -f "$meta" ]; then
      declared="$(awk '/^Version: / { print $2; exit }' "$meta")"
      dist_version="installed $declared"
    fi
  done
fi
# The set whose fingerprints match wins. An unknown tree (locally edited, damaged) gets the set of the
# version it declares (patches/<version>/, else the top-level set for 0.5.7); failing that, the set
# that fits it best (all its files present, fewest conflicting units); that set is reported on and,
# with --force, applied.
if [ -n "$PATCHES_DIR" ]; then SETS=("$PATCHES_DIR"); else
  SETS=("$HERE")
  for d in "$HERE"/[0-9]*/; do [ -d "$d" ] && SETS+=("${d%/}"); done
fi
SET_SEQ=0; best=""; best_conflicts=""; first_missing=""
for s in "${SETS[@]}"; do
  if ! load_set "$s"; then
    [ -n "$first_missing" ] || first_missing="${MISSING[*]}"
    continue
  fi
  [ -z "$VERSION" ] || { best=""; break; }
  if [ -z "$best" ] || [ "$n_conflict" -lt "$best_conflicts" ]; then best="$s"; best_conflicts="$n_conflict"; fi
done
if [ -z "$VERSION" ]; then
  if [ -z "$PATCHES_DIR" ] && [[ "$declared" =~ ^[0-9][0-9A-Za-z.+]*$ ]] && [ -d "$HERE/$declared" ]; then
    best="$HERE/$declared"
  elif [ -z "$PATCHES_DIR" ] && [ "$declared" = 0.5.7 ]; then best="$HERE"
  fi
  [ -n "$best" ] || die 2 "'$ROOT' is not an OpenRLHF tree these patches fit: missing $first_missing"
  load_set "$best" || die 2 "'$ROOT' is not an OpenRLHF tree these patches fit: missing ${MISSING[*]}"
fi
label="${VERSION:-an unknown OpenRLHF}${dist_version:+ ($dist_version)}"

summary() {  # one line per patch: applied / not applied / partial / conflict
  local p name i s states
  for p in "${PATCHES[@]}"; do
    name="$(basename "$p")"; states=""
    for i in "${!UNIT_FILE[@]}"; do
      [ "${UNIT_PATCH[$i]}" = "$name" ] || continue
      states="$states ${UNIT_PATH[$i]}=${STATE[i]}"
    done
    case "$states" in
      *conflict*) s="does not fit (locally modified, or hunks partially applied):$states" ;;
      *applied*pending*|*pending*applied*) s="PARTIALLY applied:$states" ;;
      *pending*) s="not applied" ;;
      *) s="applied" ;;
    esac
    say "  $name: $s"
  done
}

say "target: $ROOT: $label"
say "patch set: $SET_DIR (${#PATCHES[@]} patch(es))"
if [ -z "$VERSION" ] && [ "$n_conflict" = 0 ]; then
  # the files reverse-patch cleanly but are not a known release: say which ones differ
  for f in "${FILES[@]}"; do
    have="$(sha256sum "$PRISTINE/$f" | cut -c1-64)"
    [[ "$FINGERPRINTS" == *"$have"* ]] || say "  $f differs from every known OpenRLHF ($KNOWN)"
  done
fi
if [ "$n_conflict" -gt 0 ]; then
  summary
  for i in "${!UNIT_FILE[@]}"; do
    if [ "${STATE[i]}" = conflict ]; then explain_failure "$i" "${FWD_OUT[i]}"; fi
  done
  die 1 "some patches neither apply nor revert cleanly: '$ROOT' was left untouched"
fi
if [ -z "$VERSION" ] && [ "$FORCE" = 0 ]; then
  die 2 "'$ROOT' is not a known OpenRLHF (${KNOWN% }: the versions these patches are made and tested for); use --force to try anyway (fuzz $PATCH_FUZZ)"
fi

# --------------------------------------------------------------------------------- helpers
compile_check() {  # compile the staged modules without writing .pyc files anywhere
  local d="$1"
  command -v "$PYTHON" >/dev/null 2>&1 || die 2 "PYTHON='$PYTHON' not found (needed for the compile check)"
  (cd "$d" && "$PYTHON" - "${FILES[@]}" <<'PY'
import sys
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        compile(f.read(), path, "exec")
PY
  ) || die 1 "the patched modules do not compile: '$ROOT' was left untouched"
}

install_files() {  # install_files DIR: replace ROOT's files by DIR's changed ones (tmp + rename)
  local d="$1" f tmp changed=()
  for f in "${FILES[@]}"; do cmp -s "$d/$f" "$ROOT/$f" || changed+=("$f"); done
  for f in "${changed[@]}"; do [ -w "$ROOT/$f" ] || die 1 "cannot write $ROOT/$f: nothing was changed"; done
  local tmps=()
  for f in "${changed[@]}"; do
    tmp="$(mktemp "$ROOT/$f.coderl.XXXXXX")"
    tmps+=("$tmp")
    cat "$d/$f" > "$tmp"
    chmod --reference="$ROOT/$f" "$tmp"
  done
  # every file is written before any is renamed, so a failure above leaves the tree as it was
  local k=0
  for f in "${changed[@]}"; do mv -f "${tmps[$k]}" "$ROOT/$f"; k=$((k + 1)); done
  say "wrote ${#changed[@]} file(s): ${changed[*]}"
}

verify_help() {
  [ "$VERIFY_HELP" != 0 ] || { say "--help check skipped (VERIFY_HELP=0)"; return 0; }
  local out rc=0
  # run from an empty directory so that no other openrlhf/ shadows TARGET
  out="$(cd "$WORK" && PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" \
    timeout "$VERIFY_TIMEOUT" "$PYTHON" -m openrlhf.cli.train_ppo_ray --help 2>&1)" || rc=$?
  if [ "$rc" = 0 ]; then
    # (bash matching, not `| grep -q`: with pipefail an early grep exit fails the pipeline)
    if [[ "$out" == *"{gae,reinforce,rloo,"*"group_norm"* && "$out" == *"group_norm_std_threshold"* ]]; then
      say "verified: python -m openrlhf.cli.train_ppo_ray --help lists group_norm"
      return 0
    fi
    die 1 "train_ppo_ray --help does not list group_norm: is another openrlhf ahead of '$ROOT' on sys.path?"
  fi
  local missing_mod
  missing_mod="$(printf '%s\n' "$out" | sed -n "s/.*No module named '\([^']*\)'.*/\1/p" | tail -n1)"
  if [ -n "$missing_mod" ] && [ "${missing_mod%%.*}" != openrlhf ] && [ "$VERIFY_HELP" = auto ]; then
    say "--help check skipped: OpenRLHF's dependency '$missing_mod' is not importable by $PYTHON (set PYTHON to the training env's python to run it)"
    return 0
  fi
  printf '%s\n' "$out" | tail -n 20 >&2
  die 1 "python -m openrlhf.cli.train_ppo_ray --help failed (rc=$rc) on the patched tree"
}

# ------------------------------------------------------------------------------------ modes
if [ "$MODE" = revert ]; then
  if [ "$n_applied" = 0 ]; then
    summary
    say "not applied: nothing to revert"
    exit 0
  fi
  # PRISTINE already holds the reverted files; for a known tree they match its fingerprints byte for byte
  install_files "$PRISTINE"
  if [ -n "$VERSION" ]; then
    say "reverted: the files are byte-identical to OpenRLHF $VERSION"
  else
    say "reverted (--force; not a known OpenRLHF, so byte identity could not be checked)"
  fi
  exit 0
fi

if [ "$n_pending" = 0 ]; then
  summary
  say "already applied: nothing to do"
  exit 0
fi
if [ "$n_applied" -gt 0 ] && [ "$FORCE" = 0 ]; then
  summary
  err "partially applied tree (see above): nothing was changed."
  err "run '$0 $TARGET --revert' and apply again, or add --force to apply only the missing parts"
  exit 3
fi

# apply every pending unit, in order, to the staged copy; the tree is touched only if all succeed
for i in "${!UNIT_FILE[@]}"; do
  [ "${STATE[i]}" = pending ] || continue
  if ! out="$(run_patch "$STAGE" "$i" 2>&1)"; then
    explain_failure "$i" "$out"
    die 1 "'$ROOT' was left untouched"
  fi
done
compile_check "$STAGE"

if [ "$MODE" = check ]; then
  summary
  say "check: all patches apply cleanly to $label and the patched modules compile (nothing written)"
  exit 0
fi
install_files "$STAGE"
say "applied ${#PATCHES[@]} patch(es) to $label"
verify_help
