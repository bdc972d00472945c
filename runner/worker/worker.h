// perfgate's own worker (`perfgate-runner worker`): cells of perfgate's models or an
// AOTInductor package served in the worker mode of the --exec protocol, version 3
// (docs/PROTOCOL.md, "Worker mode"), so that `perfgate ab` drives it exactly like a user's
// benchmark: the cell on stdin, hello, warm-up, ready, then one timed repetition per request.
#pragma once
#include <cstdint>
#include <string>

#include "common/errors.h"

namespace pg::worker {

// Serves the cells read from `in_fd`, one after another (its hello says "cells": "many"),
// answering on `out_fd`; returns the exit status: 0 when the input ends after an end line, 2
// after refusing a cell or a request, 4 after an oom or error line. Settings named
// in a refusal are written by `spell` (the command line's flags). When `in_fd` ends before the
// end request, the process exits at once with status 0, whatever it was doing: its driver is
// gone. Throws RuntimeFailure when `out_fd` cannot be written.
// With PERFGATE_PLACEMENT_SEED in its environment (perfgate ab sets it), every cell it opens
// places its device memory at random (runner/lm/placement.h), the k-th opening (from 0) from
// opening_placement_seed(seed, k); a value that is not an unsigned decimal throws UsageError.
int serve_worker(int in_fd, int out_fd, const std::string& cwd, const SettingSpelling& spell);

uint64_t opening_placement_seed(uint64_t worker_seed, uint64_t opening);

}  // namespace pg::worker
