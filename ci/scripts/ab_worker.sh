#!/usr/bin/env bash
# shellcheck disable=SC2153  # PG_SANDBOX is the job state pg_state_load sources
# One side's worker of a pull request's A/B gate: the trusted `perfgate ab` of pr_bench.sh starts
# this (as --base-worker / --head-worker, in that side's trusted copy of the commit) for every
# cell and side. It runs what the side would have run without it, PERFGATE_WORKER_COMMAND (the
# sweep's --exec benchmark, or the trusted perfgate's own worker), inside that side's own
# container (pg_untrusted_worker): the measured code of base and head never runs in the trusted
# perfgate's process or user, and each side can write only its own clone and state, exactly as in
# the rounds of `perfgate run`. stdin and stdout are the worker protocol (docs/PROTOCOL.md).
# Usage: ab_worker.sh base|head
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
pg_state_load
side=${1:-}
case $side in base | head) ;; *) pg_die "ab_worker.sh: the side must be base or head, got '$side'" ;; esac
: "${PERFGATE_WORKER_COMMAND:?ab_worker.sh is started by perfgate ab, which sets PERFGATE_WORKER_COMMAND}"
# perfgate ab starts it in the trusted copy pr_bench.sh made for this side.
at="$PERFGATE_WORK/ab/$side"
[ "$(pwd -P)" = "$(cd "$at" && pwd -P)" ] || pg_die "ab_worker.sh: started in $PWD, not in the $side side's copy $at"
pg_untrusted_worker "$side" "$at" bash -c "$PERFGATE_WORKER_COMMAND"
