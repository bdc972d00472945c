#include "runner/exec/exec_runner.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/inert_text.h"
#include "runner/exec/exec_process.h"
#include "runner/lm/gpu_table.h"
#include "runner/lm/metrics.h"

namespace pg::exec {
namespace {

const char* onoff(bool b) { return b ? "on" : "off"; }

// The last lines of stderr, on one line, for a cell's reason: each line made inert
// (common/inert_text.h), so a bare CR, an escape sequence or a workflow command the benchmark
// prints stays text; the end is kept, where a traceback says what went wrong.
constexpr size_t kStderrSummaryBytes = 1500;

std::string stderr_summary(const std::string& tail) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < tail.size()) {
    size_t end = tail.find('\n', start);
    if (end == std::string::npos) end = tail.size();
    std::string l = tail.substr(start, end - start);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
    if (!l.empty()) lines.push_back(inert_text(l, kInertMessageChars));
    start = end + 1;
  }
  if (lines.empty()) return "";
  std::string out;
  for (size_t i = lines.size() > 6 ? lines.size() - 6 : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  if (out.size() > kStderrSummaryBytes) {
    size_t cut = out.size() - kStderrSummaryBytes;
    while (cut < out.size() && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) ++cut;
    out = "..." + out.substr(cut);
  }
  return "; stderr: " + out;
}

// Every reason of an exec cell holds the benchmark's text (its stderr, its own reason, a line it
// printed): stored as one inert line at the message cap.
CellResult failed(CellStatus status, const std::string& reason) {
  CellResult r;
  r.status = status;
  r.reason = inert_text(reason, kInertMessageChars);
  return r;
}

// A benchmark's own reason (an oom or error line) is capped well below the message cap, so the
// stderr excerpt after it is kept.
constexpr size_t kReportedReasonChars = 400;

// The metrics of an exec cell: the same derivation as perfgate's own models, with the model's
// sizes and FLOPs from the hello line; a metric whose input is missing is left out (null).
std::map<std::string, double> exec_metrics(const CellKey& key, const CellSamples& s,
                                           const ModelFacts& f, const lm::PeakFigures& peaks) {
  const double B = key.batch_size, P = key.seq_len, G = key.gen_tokens;
  lm::CellCost cost;
  cost.weight_bytes = f.param_bytes.value_or(0);
  cost.kv_bytes = f.kv_bytes_per_token.value_or(0) * B * (P + G);
  cost.kv_read_bytes_per_step = f.kv_bytes_per_token.value_or(0) * B * (P + G / 2);
  cost.prefill_flops = f.flops_per_token.value_or(0) * B * P;
  auto m = lm::derive_metrics(key, s, cost, peaks);
  if (!f.param_bytes) {
    m.erase("weight_bytes");
    m.erase("achieved_bw_gbps");
    m.erase("mbu");
  }
  if (!f.kv_bytes_per_token) m.erase("kv_bytes");
  if (!f.flops_per_token) m.erase("prefill_mfu");
  return m;
}

std::string versions_text(const EngineInfo& e) {
  std::string out = e.name;
  for (const auto& [k, v] : e.versions) out += " " + k + "=" + v;
  return out;
}

}  // namespace

std::map<std::string, std::string> cell_environment(const CellKey& key, const MeasureOptions& opt,
                                                    const std::string& repo_dir) {
  return {
      {"PERFGATE_PROTOCOL", std::to_string(kProtocolVersion)},
      {"PERFGATE_MODEL", key.model},
      {"PERFGATE_BATCH", std::to_string(key.batch_size)},
      {"PERFGATE_PROMPT_LEN", std::to_string(key.seq_len)},
      {"PERFGATE_GEN_TOKENS", std::to_string(key.gen_tokens)},
      {"PERFGATE_WARMUP", std::to_string(opt.warmup)},
      {"PERFGATE_REPS", std::to_string(opt.reps)},
      {"PERFGATE_DEVICE", key.device},
      {"PERFGATE_DTYPE", key.dtype},
      {"PERFGATE_SEED", std::to_string(opt.seed)},
      {"PERFGATE_KV_CACHE", onoff(key.kv_cache)},
      {"PERFGATE_ATTENTION", key.attention},
      {"PERFGATE_CUDA_GRAPHS", onoff(key.cuda_graphs)},
      {"PERFGATE_REPO", repo_dir},
      {"PERFGATE_PROFILE", onoff(opt.profile)},
  };
}

std::string cell_json(const CellKey& key, const MeasureOptions& opt, const std::string& repo_dir) {
  nlohmann::ordered_json j = {
      {"protocol", kProtocolVersion},
      {"model", key.model},
      {"batch_size", key.batch_size},
      {"prompt_len", key.seq_len},
      {"gen_tokens", key.gen_tokens},
      {"warmup", opt.warmup},
      {"reps", opt.reps},
      {"device", key.device},
      {"dtype", key.dtype},
      {"seed", opt.seed},
      {"kv_cache", key.kv_cache},
      {"attention", key.attention},
      {"cuda_graphs", key.cuda_graphs},
      {"repo", repo_dir},
      {"profile", opt.profile},
  };
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

ExecMeasurer::ExecMeasurer(ExecSettings settings) : settings_(std::move(settings)) {
  std::error_code ec;
  const auto abs = std::filesystem::absolute(settings_.repo_dir, ec);
  if (!ec) settings_.repo_dir = abs.lexically_normal().string();
  while (settings_.repo_dir.size() > 1 && settings_.repo_dir.back() == '/')
    settings_.repo_dir.pop_back();
}

CellResult ExecMeasurer::measure(const CellKey& key, const MeasureOptions& opt) {
  ProcessSpec spec;
  spec.command = settings_.command;
  spec.cwd = settings_.repo_dir;
  for (const auto& kv : cell_environment(key, opt, settings_.repo_dir)) spec.env.push_back(kv);
  spec.stdin_text = cell_json(key, opt, settings_.repo_dir);
  spec.timeout = std::chrono::milliseconds(static_cast<int64_t>(settings_.timeout_s * 1000));

  ProtocolReader reader(opt.reps, key.gen_tokens, opt.profile);
  std::optional<ProtocolError> bad_line;
  const ProcessOutcome proc = run_process(spec, [&](std::string_view line) {
    try {
      reader.feed(line);
      return true;
    } catch (const ProtocolError& e) {
      bad_line = e;
      return false;  // no point in waiting for the rest: the cell is an error already
    } catch (const std::exception& e) {
      bad_line = ProtocolError(reader.lines(), e.what());
      return false;
    }
  });
  // The run's fingerprint takes the first engine that said hello, even in a cell that failed.
  if (reader.engine() && !engine_) engine_ = *reader.engine();
  const std::string err = stderr_summary(proc.stderr_tail);
  using End = ProcessOutcome::End;
  if (proc.end == End::spawn_failed)
    return failed(CellStatus::error, "the command " + describe_end(proc));
  if (bad_line) return failed(CellStatus::error, std::string(bad_line->what()) + err);
  if (!proc.overflow.empty())
    return failed(CellStatus::error,
                  fmt::format("stdout line {}: {}", reader.lines() + 1, proc.overflow) + err);
  if (proc.end == End::timed_out)
    return failed(
        CellStatus::error,
        fmt::format("no complete result within --exec-timeout {} s (after stdout line "
                    "{}, {} of {} repetitions); its process group was killed{}",
                    settings_.timeout_s, reader.lines(), reader.reps_seen(), opt.reps, err));
  if (reader.reported_failure()) {
    return failed(*reader.reported_failure(),
                  "the benchmark reported: " +
                      inert_text(reader.reported_reason(), kReportedReasonChars) + err);
  }
  if (proc.end != End::exited || proc.exit_status != 0)
    return failed(
        CellStatus::error,
        fmt::format("the command {} (after stdout line {}, {} of {} repetitions){}",
                    describe_end(proc), reader.lines(), reader.reps_seen(), opt.reps, err));
  if (reader.state() != ProtocolReader::State::done)
    return failed(
        CellStatus::error,
        fmt::format("stdout line {}: output ended before the end line ({}; {} of {} "
                    "repetitions){}",
                    reader.lines() + 1, reader.engine() ? "after the hello line" : "no hello line",
                    reader.reps_seen(), opt.reps, err));

  const EngineInfo& engine = *reader.engine();
  if (!(*engine_ == engine)) {
    return failed(CellStatus::error,
                  fmt::format("stdout line 1: the engine changed within the run: this cell "
                              "reports {}, the run's first cell {}",
                              versions_text(engine), versions_text(*engine_)));
  }
  if (engine.model.context && key.seq_len + key.gen_tokens > *engine.model.context)
    return failed(CellStatus::error,
                  fmt::format("prompt length {} + gen-tokens {} exceeds the model's context {} "
                              "(hello line's model.context)",
                              key.seq_len, key.gen_tokens, *engine.model.context));

  CellResult r;
  r.samples = reader.samples();
  if (auto why = lm::sanity_failure(r.samples, opt.reps, key.gen_tokens)) {
    r.status = CellStatus::invalid;
    r.reason = inert_text(*why, kInertMessageChars);
    return r;
  }
  const bool cuda = key.device != "cpu";
  const lm::PeakFigures peaks =
      cuda ? lm::peaks_for(settings_.device_name, key.dtype, opt.peak_bw_gbps, opt.peak_tflops)
           : lm::PeakFigures{opt.peak_bw_gbps, opt.peak_tflops};
  r.metrics = exec_metrics(key, r.samples, engine.model, peaks);
  if (reader.peak_alloc_bytes()) r.metrics["peak_alloc_bytes"] = *reader.peak_alloc_bytes();
  r.profile = reader.profile();  // protocol 2's profile line, when the benchmark printed one
  return r;
}

Environment ExecMeasurer::fingerprint() const {
  Environment env;
  if (!engine_) return env;
  env["engine"] = engine_->name;
  for (const auto& [k, v] : engine_->versions) env["engine." + k] = v;
  if (engine_->model.display_name) env["engine.model"] = *engine_->model.display_name;
  return env;
}

}  // namespace pg::exec
