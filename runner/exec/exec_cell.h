// An `--exec` cell on both ends of the protocol (docs/PROTOCOL.md): the cell as the command
// receives it (environment and stdin line, one-shot or worker), and what perfgate makes of what
// the benchmark printed: the reasons of a failed cell, and a measured cell's result with its
// metrics, one derivation for ExecMeasurer and for the workers of `perfgate ab`. LibTorch-free.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "core/profile.h"
#include "core/run.h"
#include "runner/exec/exec_protocol.h"
#include "runner/lm/metrics.h"
#include "runner/measurer.h"

namespace pg::exec {

// The cell as the command receives it: the environment variables and the stdin JSON text (one
// line). A worker's cell says protocol 3 and `worker` (PERFGATE_WORKER=on); its `reps` is the
// most repetitions perfgate may ask for.
std::map<std::string, std::string> cell_environment(const CellKey& key,
                                                    const runner::MeasureOptions& opt,
                                                    const std::string& repo_dir,
                                                    ProtocolMode mode = ProtocolMode::one_shot);
std::string cell_json(const CellKey& key, const runner::MeasureOptions& opt,
                      const std::string& repo_dir, ProtocolMode mode = ProtocolMode::one_shot);

// A checkout's directory as the command sees it (its cwd and PERFGATE_REPO): absolute, normal,
// without a trailing slash.
std::string checkout_dir(const std::string& dir);

// "; stderr: LAST | LINES" (each line inert, the end kept), or "" for an empty stderr.
std::string stderr_summary(const std::string& tail);

// The reason of a cell the benchmark itself reported as oom / error ("the benchmark reported:
// ..."), its own text capped so that a stderr excerpt after it survives.
std::string reported_reason(const std::string& reason);

// A failed cell; its reason holds the benchmark's text, so it is stored as one inert line.
CellResult failed_cell(CellStatus status, const std::string& reason);

// The metrics of an exec cell: the derivation of perfgate's own models, with the model's sizes
// and FLOPs from the hello line; a metric whose input is missing is left out (null).
std::map<std::string, double> exec_metrics(const CellKey& key, const CellSamples& s,
                                           const ModelFacts& facts, const lm::PeakFigures& peaks);

// A cell whose benchmark delivered its samples: `error` past the model's context, `invalid`
// outside the sanity limits (opt.reps: the repetitions the samples must hold), else `ok` with the
// metrics (the GPU's peaks from `device_name`, the fingerprint's GPU name), peak_alloc_bytes and
// the profile.
CellResult exec_cell_result(const CellKey& key, const runner::MeasureOptions& opt,
                            const EngineInfo& engine, CellSamples samples,
                            std::optional<double> peak_alloc_bytes,
                            std::optional<CellProfile> profile, const std::string& device_name);

}  // namespace pg::exec
