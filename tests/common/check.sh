# Shared by the shell test scripts: `check DESCRIPTION COMMAND...` runs COMMAND and prints
# ok/FAIL, counting both; `has FILE TEXT` is true when FILE contains TEXT; `init_repo DIR` makes DIR
# a git repository on branch main with a test identity.
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
init_repo() {
  mkdir -p "$1"
  git -C "$1" init -q -b main
  git -C "$1" config user.email ci@perfgate.test
  git -C "$1" config user.name "perfgate ci"
  git -C "$1" config commit.gpgsign false
}
