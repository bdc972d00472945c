#include "runner/ab/ab_side.h"

#include <fmt/format.h>
#include <limits.h>
#include <unistd.h>

#include <chrono>

#include "common/inert_text.h"
#include "runner/exec/exec_runner.h"
#include "runner/exec/worker_client.h"
#include "runner/fingerprint.h"
#include "runner/lm/gpu_table.h"
#include "runner/lm/metrics.h"
#include "runner/sweep_config.h"
#include "store/store.h"

namespace pg::ab {

std::string own_executable() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("perfgate-runner");
}

SideState::SideState(const SweepConfig& cfg, std::string worker, Environment env,
                     AbPairing pairing, std::string side)
    : cfg_(cfg),
      worker_(std::move(worker)),
      env_(std::move(env)),
      pairing_(std::move(pairing)),
      git_(read_git_info(cfg.repo)),
      exec_(!cfg.exec.empty()) {
  pairing_.side = std::move(side);
}

SideState::~SideState() = default;

std::unique_ptr<SideCell> SideState::open(const CellKey& key, const MeasureOptions& opt) {
  return std::make_unique<SideCell>(*this, key, opt);
}

void SideState::begin_if_needed(Store& store, const std::string& started_at) {
  if (begun_) return;
  Environment full = env_;
  if (exec_ && engine_) {  // as `perfgate run --exec` fingerprints the engine (docs/PROTOCOL.md)
    full["engine"] = engine_->name;
    for (const auto& [k, v] : engine_->versions) full["engine." + k] = v;
    if (engine_->model.display_name) full["engine.model"] = *engine_->model.display_name;
  }
  run_id_ = store.begin_run(git_, full, sweep_config_json(cfg_), started_at, pairing_);
  begun_ = true;
}

void SideState::store_cell(Store& store, const std::string& started_at, CellResult cell) {
  begin_if_needed(store, started_at);
  store.add_cell(run_id_, cell);
}

void SideState::finish(Store& store, RunStatus status) noexcept {
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

SideCell::SideCell(SideState& side, const CellKey& key, const MeasureOptions& opt)
    : side_(side), key_(key), opt_(opt) {
  exec::WorkerSpec spec;
  spec.command = side.worker_;
  spec.cwd = side.cfg_.repo;
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(side.cfg_.exec_timeout_s * 1000));
  worker_ = std::make_unique<exec::WorkerClient>(spec, key, opt);
  // The run's fingerprint takes the first engine that said hello, as `perfgate run --exec` does.
  if (worker_->engine() && !side.engine_) side.engine_ = *worker_->engine();
}

SideCell::~SideCell() = default;

bool SideCell::repetition(int position) {
  if (!worker_->ok()) return false;
  auto rep = worker_->repetition();
  if (!rep) return false;
  samples_.prefill_ms.push_back(rep->prefill_ms);
  samples_.decode_ms.push_back(std::move(rep->decode_ms));
  samples_.ab_position.push_back(position);
  return true;
}

CellResult SideCell::finish() {
  CellResult r;
  r.key = key_;
  std::optional<exec::WorkerClient::End> end;
  if (worker_->ok()) end = worker_->finish();
  if (auto failure = worker_->failure()) {
    r.status = failure->first;
    r.reason = failure->second;
    return r;
  }
  const exec::EngineInfo& engine = *worker_->engine();
  if (side_.exec_ && side_.engine_ && !(*side_.engine_ == engine)) {
    r.status = CellStatus::error;
    r.reason = "the engine changed within the run: this cell reports " + engine.name +
               ", the run's first cell " + side_.engine_->name;
    return r;
  }
  r.samples = samples_;
  const int reps = static_cast<int>(samples_.prefill_ms.size());
  if (auto why = lm::sanity_failure(r.samples, reps, key_.gen_tokens)) {
    r.status = CellStatus::invalid;
    r.reason = inert_text(*why, kInertMessageChars);
    return r;
  }
  const auto device = side_.env_.find("device");
  const lm::PeakFigures peaks =
      key_.device != "cpu"
          ? lm::peaks_for(device == side_.env_.end() ? "" : device->second, key_.dtype,
                          opt_.peak_bw_gbps, opt_.peak_tflops)
          : lm::PeakFigures{opt_.peak_bw_gbps, opt_.peak_tflops};
  r.metrics = exec::exec_metrics(key_, r.samples, engine.model, peaks);
  // perfgate's own worker reports on the CPU what `perfgate run` calls the cell's RSS growth.
  if (end && end->peak_alloc_bytes)
    r.metrics[!side_.exec_ && key_.device == "cpu" ? "peak_rss_growth_bytes" : "peak_alloc_bytes"] =
        *end->peak_alloc_bytes;
  if (end) r.profile = end->profile;
  return r;
}

}  // namespace pg::ab
