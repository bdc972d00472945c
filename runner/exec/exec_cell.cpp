#include "runner/exec/exec_cell.h"

#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/inert_text.h"
#include "runner/lm/gpu_table.h"

namespace pg::exec {
namespace {

const char* onoff(bool b) { return b ? "on" : "off"; }

// The end of stderr is kept, where a traceback says what went wrong.
constexpr size_t kStderrSummaryBytes = 1500;

// A benchmark's own reason (an oom or error line) is capped well below the message cap, so the
// stderr excerpt after it is kept.
constexpr size_t kReportedReasonChars = 400;

}  // namespace

std::map<std::string, std::string> cell_environment(const CellKey& key,
                                                    const runner::MeasureOptions& opt,
                                                    const std::string& repo_dir,
                                                    ProtocolMode mode) {
  const bool worker = mode == ProtocolMode::worker;
  std::map<std::string, std::string> env = {
      {"PERFGATE_PROTOCOL",
       std::to_string(worker ? kWorkerProtocolVersion : kOneShotProtocolVersion)},
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
  if (worker) env["PERFGATE_WORKER"] = "on";
  return env;
}

std::string cell_json(const CellKey& key, const runner::MeasureOptions& opt,
                      const std::string& repo_dir, ProtocolMode mode) {
  const bool worker = mode == ProtocolMode::worker;
  nlohmann::ordered_json j = {
      {"protocol", worker ? kWorkerProtocolVersion : kOneShotProtocolVersion},
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
  if (worker) j["worker"] = true;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string checkout_dir(const std::string& dir) {
  std::string out = dir;
  std::error_code ec;
  const auto abs = std::filesystem::absolute(dir, ec);
  if (!ec) out = abs.lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// The last lines of stderr, on one line, for a cell's reason: each line made inert
// (common/inert_text.h), so a bare CR, an escape sequence or a workflow command the benchmark
// prints stays text.
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

std::string reported_reason(const std::string& reason) {
  return "the benchmark reported: " + inert_text(reason, kReportedReasonChars);
}

// Every reason of an exec cell holds the benchmark's text (its stderr, its own reason, a line it
// printed): stored as one inert line at the message cap.
CellResult failed_cell(CellStatus status, const std::string& reason) {
  CellResult r;
  r.status = status;
  r.reason = inert_text(reason, kInertMessageChars);
  return r;
}

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

CellResult exec_cell_result(const CellKey& key, const runner::MeasureOptions& opt,
                            const EngineInfo& engine, CellSamples samples,
                            std::optional<double> peak_alloc_bytes,
                            std::optional<CellProfile> profile, const std::string& device_name) {
  if (engine.model.context && key.seq_len + key.gen_tokens > *engine.model.context)
    return failed_cell(CellStatus::error,
                       fmt::format("prompt length {} + gen-tokens {} exceeds the model's context "
                                   "{} (hello line's model.context)",
                                   key.seq_len, key.gen_tokens, *engine.model.context));
  CellResult r;
  r.samples = std::move(samples);
  if (auto why = lm::sanity_failure(r.samples, opt.reps, key.gen_tokens)) {
    r.status = CellStatus::invalid;
    r.reason = inert_text(*why, kInertMessageChars);
    return r;
  }
  const bool cuda = key.device != "cpu";
  const lm::PeakFigures peaks =
      cuda ? lm::peaks_for(device_name, key.dtype, opt.peak_bw_gbps, opt.peak_tflops)
           : lm::PeakFigures{opt.peak_bw_gbps, opt.peak_tflops};
  r.metrics = exec_metrics(key, r.samples, engine.model, peaks);
  if (peak_alloc_bytes) r.metrics["peak_alloc_bytes"] = *peak_alloc_bytes;
  r.profile = std::move(profile);  // protocol 2's profile line, when the benchmark printed one
  return r;
}

}  // namespace pg::exec
