// One side of an A/B run (runner/ab/ab_run.h): its checkout, its worker command and its stored
// run; and one cell of that side, held open in its worker between the other side's repetitions.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/run.h"
#include "runner/exec/exec_protocol.h"
#include "runner/measurer.h"
#include "runner/sweep_config.h"

namespace pg {
namespace store {
class Store;
}
}  // namespace pg
namespace pg::exec {
class ChildProcess;
class WorkerClient;
}  // namespace pg::exec

namespace pg::ab {

// This executable's path (the runner that holds perfgate's own worker).
std::string own_executable();

class SideCell;

class SideState {
 public:
  // `default_worker`: what the side runs without a worker of its own, given to every worker as
  // PERFGATE_WORKER_COMMAND (for a wrapper that runs it, as the action's sandbox does).
  // `random_placement`: its workers get PERFGATE_PLACEMENT_SEED (AbSettings::random_placement).
  SideState(const runner::SweepConfig& cfg, std::string worker, std::string default_worker,
            Environment env, AbPairing pairing, std::string side, bool random_placement);
  SideState(SideState&&) = default;
  ~SideState();

  // Starts the side's worker for the cell: it has warmed up when this returns. The first
  // `untimed` repetitions it is asked for are the shared warm-up: left out of the result.
  std::unique_ptr<SideCell> open(const CellKey& key, const runner::MeasureOptions& opt,
                                 int untimed);
  // The run row is written with the first cell (an `exec` engine's versions come from it).
  void store_cell(store::Store& store, const std::string& started_at, CellResult cell);
  void begin_if_needed(store::Store& store, const std::string& started_at);
  // Never throws: it runs on the way out of a failure too.
  void finish(store::Store& store, RunStatus status) noexcept;

  // Hands this side's idle worker to `other` (A/B runs that share their workers).
  void pass_worker_to(SideState& other) { other.idle_worker_ = std::move(idle_worker_); }

  int64_t run_id() const { return run_id_; }
  const GitInfo& git() const { return git_; }
  std::string commit_text() const;

 private:
  friend class SideCell;
  runner::SweepConfig cfg_;
  std::string worker_, default_worker_;
  Environment env_;
  AbPairing pairing_;
  GitInfo git_;
  bool exec_;  // the user's benchmark, whose engine joins the fingerprint
  bool random_placement_;
  std::optional<exec::EngineInfo> engine_;
  // A worker that finished its last cell and takes more ("cells": "many"): the next cell's.
  std::unique_ptr<exec::ChildProcess> idle_worker_;
  int64_t run_id_ = 0;
  bool begun_ = false, finished_ = false;
};

class SideCell {
 public:
  SideCell(SideState& side, const CellKey& key, const runner::MeasureOptions& opt, int untimed);
  ~SideCell();
  // One timed repetition, at `position` in its pair (0 first, 1 second); false once this side's
  // cell has failed (then it asks for nothing more).
  bool repetition(int position);
  // Ends the cell in the worker and makes its result: samples, metrics, profile, or the failure.
  CellResult finish();

 private:
  SideState& side_;
  CellKey key_;
  runner::MeasureOptions opt_;
  std::unique_ptr<exec::WorkerClient> worker_;
  int untimed_;
  std::vector<int> positions_;  // of each repetition taken, in its pair
};

}  // namespace pg::ab
