#!/usr/bin/env bash
# Last step of every job, success or not: ends the sandbox user's processes and removes the
# sandbox (clones, builds, caches, the scratch database). Nothing the measured code wrote
# survives the job.
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
[ -f "$(pg_state_file)" ] || exit 0
pg_state_load
pg_sandbox_destroy
