#!/usr/bin/env bash
# README command 1: install what building and running perfgate needs (no test or developer
# tools: scripts/test.sh adds those), build perfgate and perfgate-runner only, and run the quick
# start: a CPU sweep of the `tiny` model into ./perfgate.db, with its table printed. Idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh --quickstart
./build/perfgate run --model tiny --device cpu --db perfgate.db
cat <<'NEXT'

Next (from this directory):
  ./build/perfgate serve --db perfgate.db         # the dashboard: http://127.0.0.1:8080/
  ./build/perfgate run --model tiny --device cpu --db perfgate.db   # another run, for a trend
  ./build/perfgate --help                         # every command (docs/CLI.md)
NEXT
