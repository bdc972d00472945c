// The cell line perfgate's worker reads first on stdin (docs/PROTOCOL.md, "Worker mode"): the
// cell's JSON object of protocol version 3 with "worker": true, read strictly into a cell key and
// the measurement's options. LibTorch-free.
#pragma once
#include <string>

#include "core/run.h"
#include "runner/measurer.h"

namespace pg::worker {

// The newest protocol version the worker speaks, and what its hello line says.
inline constexpr int kWorkerProtocolVersion = 3;

struct WorkerCell {
  CellKey key;  // key.model as the cell gives it: a preset, file:PATH or aoti:PATH
  runner::MeasureOptions opt;
  std::string repo;  // absolute: where a relative artifact path resolves
};

// Throws UsageError naming the key ("cell line: \"batch_size\" must be an integer, got \"2\"")
// for a line that is not the cell object: unknown or missing keys, a wrong type, a protocol
// before 3, or a cell not in worker mode. A relative `repo` resolves against `cwd`; without one,
// `cwd` is the repository.
WorkerCell read_worker_cell(const std::string& line, const std::string& cwd);

}  // namespace pg::worker
