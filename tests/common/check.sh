# Shared by the shell test scripts: `check DESCRIPTION COMMAND...` runs COMMAND and prints
# ok/FAIL, counting both; `has FILE TEXT` is true when FILE contains TEXT.
# shellcheck shell=bash
passes=0 failures=0
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok   - $what"
    passes=$((passes + 1))
  else
    echo "FAIL - $what"
    failures=$((failures + 1))
  fi
}
has() { grep -qF -- "$2" "$1"; }
