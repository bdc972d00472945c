#include "runner/ab/ab_side.h"

#include <fmt/format.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "runner/exec/exec_cell.h"
#include "runner/exec/exec_process.h"
#include "runner/exec/worker_client.h"
#include "runner/fingerprint.h"
#include "runner/sweep_config.h"
#include "store/store.h"

namespace pg::ab {

std::string own_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("perfgate-runner");
}

SideState::SideState(const runner::SweepConfig& cfg, std::string worker, std::string default_worker,
                     Environment env, AbPairing pairing, std::string side, bool random_placement)
    : cfg_(cfg),
      worker_(std::move(worker)),
      default_worker_(std::move(default_worker)),
      env_(std::move(env)),
      pairing_(std::move(pairing)),
      git_(runner::read_git_info(cfg.repo)),
      exec_(!cfg.exec.empty()),
      random_placement_(random_placement) {
  pairing_.side = std::move(side);
}

SideState::~SideState() = default;

std::unique_ptr<SideCell> SideState::open(const CellKey& key, const runner::MeasureOptions& opt,
                                          int untimed) {
  return std::make_unique<SideCell>(*this, key, opt, untimed);
}

void SideState::begin_if_needed(store::Store& store, const std::string& started_at) {
  if (begun_) return;
  Environment full = env_;
  if (exec_ && engine_) {  // as `perfgate run --exec` fingerprints the engine (docs/PROTOCOL.md)
    full["engine"] = engine_->name;
    for (const auto& [k, v] : engine_->versions) full["engine." + k] = v;
    if (engine_->model.display_name) full["engine.model"] = *engine_->model.display_name;
  }
  run_id_ = store.begin_run(git_, full, runner::sweep_config_json(cfg_), started_at, pairing_);
  begun_ = true;
}

void SideState::store_cell(store::Store& store, const std::string& started_at, CellResult cell) {
  begin_if_needed(store, started_at);
  store.add_cell(run_id_, cell);
}

void SideState::finish(store::Store& store, RunStatus status) noexcept {
  if (!begun_ || finished_) return;
  try {
    store.finish_run(run_id_, status);
    finished_ = true;
  } catch (...) {  // the run stays as it was: incomplete, with every cell stored
  }
}

std::string SideState::commit_text() const {
  return git_.commit ? git_.commit->substr(0, 12) + (git_.dirty ? ", dirty" : "") : git_.state;
}

SideCell::SideCell(SideState& side, const CellKey& key, const runner::MeasureOptions& opt,
                   int untimed)
    : side_(side), key_(key), opt_(opt), untimed_(untimed) {
  exec::WorkerSpec spec;
  spec.command = side.worker_;
  spec.cwd = side.cfg_.repo;
  spec.env.emplace_back("PERFGATE_WORKER_COMMAND", side.default_worker_);
  // One seed per A/B run and side; the worker draws each cell's placement from it and the count
  // of cells it has opened (runner/worker/worker.h), so a shared worker's openings differ too.
  if (side.random_placement_)
    spec.env.emplace_back("PERFGATE_PLACEMENT_SEED",
                          std::to_string(2 * side.pairing_.seed + (side.pairing_.side == "head")));
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(side.cfg_.exec_timeout_s * 1000));
  worker_ = side.idle_worker_
                ? std::make_unique<exec::WorkerClient>(std::move(side.idle_worker_), spec, key, opt)
                : std::make_unique<exec::WorkerClient>(spec, key, opt);
  // The run's fingerprint takes the first engine that said hello, as `perfgate run --exec` does.
  if (worker_->engine() && !side.engine_) side.engine_ = *worker_->engine();
}

SideCell::~SideCell() = default;

bool SideCell::repetition(int position) {
  if (!worker_->ok() || !worker_->repetition()) return false;
  positions_.push_back(position);
  return true;
}

CellResult SideCell::finish() {
  std::optional<exec::WorkerClient::End> end;
  if (worker_->ok()) end = worker_->finish();
  side_.idle_worker_ = worker_->release();
  CellResult r;
  if (auto failure = worker_->failure()) {
    r = exec::failed_cell(failure->first, failure->second);
  } else if (side_.exec_ && side_.engine_ && !(*side_.engine_ == *worker_->engine())) {
    r = exec::failed_cell(CellStatus::error,
                          "the engine changed within the run: this cell reports " +
                              worker_->engine()->name + ", the run's first cell " +
                              side_.engine_->name);
  } else {
    CellSamples timed = worker_->samples();  // without the shared warm-up's repetitions
    const auto drop = static_cast<std::ptrdiff_t>(
        std::min<size_t>(static_cast<size_t>(untimed_), timed.prefill_ms.size()));
    timed.prefill_ms.erase(timed.prefill_ms.begin(), timed.prefill_ms.begin() + drop);
    timed.decode_ms.erase(timed.decode_ms.begin(), timed.decode_ms.begin() + drop);
    positions_.erase(positions_.begin(), positions_.begin() + drop);
    runner::MeasureOptions taken = opt_;  // the sanity check counts the repetitions this side took
    taken.reps = static_cast<int>(timed.prefill_ms.size());
    const auto device = side_.env_.find("device");
    r = exec::exec_cell_result(key_, taken, *worker_->engine(), std::move(timed),
                               end->peak_alloc_bytes, end->profile,
                               device == side_.env_.end() ? "" : device->second);
    r.samples.ab_position = positions_;
    // perfgate's own worker reports on the CPU what `perfgate run` calls the cell's RSS growth.
    auto peak = r.metrics.find("peak_alloc_bytes");
    if (!side_.exec_ && key_.device == "cpu" && peak != r.metrics.end()) {
      r.metrics["peak_rss_growth_bytes"] = peak->second;
      r.metrics.erase(peak);
    }
  }
  r.key = key_;
  return r;
}

}  // namespace pg::ab
