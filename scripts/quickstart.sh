#!/usr/bin/env bash
# README command 1: install every dependency, build, and run the quick start — a CPU sweep of the
# `tiny` model into ./perfgate.db, with the table printed and the dashboard URL shown.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
scripts/setup.sh
./build/perfgate run --model tiny --device cpu --db perfgate.db
