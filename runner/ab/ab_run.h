// `perfgate ab`: base and head of every cell measured side by side in one A/B run (docs/AB.md).
// Each side is a worker process in its own checkout (runner/exec/worker_client.h: perfgate's own
// worker for its models, the user's benchmark in worker mode for `exec`); their timed repetitions
// alternate in the seeded ABBA order of runner/ab/abba_order.h, one side on the device at a time,
// and the two sides are stored as two ordinary runs tied by one AbPairing. LibTorch-free.
#pragma once
#include <cstdint>
#include <string>

#include "runner/sweep_config.h"

namespace pg::ab {

struct AbSettings {
  // One resolved sweep per side: the same cells, each with its own checkout as `repo`.
  runner::SweepConfig base, head;
  // What measures a side's cells (`/bin/sh -c`, in the side's checkout): its `exec` command, or
  // for perfgate's own models this perfgate's worker unless a side names its own.
  std::string base_worker, head_worker;
  // The worker a side runs when it names none: the `exec` command, or perfgate's own worker.
  // Every worker finds it in PERFGATE_WORKER_COMMAND, so that a wrapper given as --base-worker or
  // --head-worker (the action's sandbox, ci/scripts/ab_worker.sh) can run it.
  std::string default_worker;
  uint64_t order_seed = 0;  // A/B run j (from 0) draws its order with order_seed + j
  // A/B runs measured cell by cell: each cell is measured by every A/B run in turn, each with its
  // own worker per side, so that a difference between two worker processes is replicated and the
  // paired test's unit (the A/B run) includes it (docs/STATISTICS.md, "Paired A/B runs").
  int ab_runs = 5;
  // The A/B runs share one worker per side (where the worker takes several cells): the cell is
  // opened afresh for each A/B run in the same two processes. Cheaper; it replicates what differs
  // between two openings of a cell (its buffers, its CUDA graph), not between two processes.
  bool share_workers = false;
  // Every worker gets PERFGATE_PLACEMENT_SEED, its own per A/B run and side, so that perfgate's
  // worker places each opening of a cell at random in device memory (docs/AB.md, "Placement"):
  // where two processes' buffers land otherwise differs between them reproducibly, a bias that
  // no number of A/B runs replicates. False: the allocator's own placement (the earlier design).
  bool random_placement = true;
};

// The worker of perfgate's own models in this installation: `<perfgate-runner> worker`.
std::string builtin_worker_command();

// Measures every cell of `s.base` (the cells of both sides are the same) and stores each A/B
// run's two runs in s.base.db. Returns the exit code: 0 when both runs are complete, 4 when a
// signal stopped it after the current cell (both runs stored as incomplete). Cells one side could
// not measure are stored as that side's `error` / `oom` cells; the other side keeps its samples.
int perform_ab(const AbSettings& s, const std::string& started_at = {});

}  // namespace pg::ab
