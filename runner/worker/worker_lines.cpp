// Writing the worker's protocol lines (docs/PROTOCOL.md).
#include "runner/worker/worker_lines.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "common/utf8.h"
#include "runner/exec/exec_profile.h"
#include "runner/worker/worker_cell.h"
#include "store/profile_json.h"

namespace pg::worker {
namespace {

using nlohmann::ordered_json;

std::string line(const ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// At most `max_bytes` of valid UTF-8 without control characters, never empty.
std::string fit_name(const std::string& raw, size_t max_bytes) {
  std::string s = valid_utf8(raw);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  if (s.size() > max_bytes) {
    size_t cut = max_bytes - 3;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s.empty() ? "?" : s;
}

}  // namespace

std::string hello_line(const std::string& torch_version, const std::optional<HelloFacts>& facts) {
  ordered_json j = {{"type", "hello"},
                    {"protocol", kWorkerProtocolVersion},
                    {"engine", "perfgate"},
                    {"versions", {{"torch", torch_version}}},
                    {"cells", "many"}};  // it serves cell after cell (docs/PROTOCOL.md)
  if (facts) {
    ordered_json m = ordered_json::object();
    auto put = [&](const char* key, const std::optional<double>& v) {
      if (!v) return;
      if (*v == std::floor(*v) && *v < 9e15)  // a count of bytes or tokens reads as one
        m[key] = static_cast<int64_t>(*v);
      else
        m[key] = *v;
    };
    put("param_bytes", facts->param_bytes);
    put("flops_per_token", facts->flops_per_token);
    put("kv_bytes_per_token", facts->kv_bytes_per_token);
    put("vocab", facts->vocab);
    put("context", facts->context);
    if (!m.empty()) j["model"] = std::move(m);
  }
  return line(j);
}

std::string ready_line() { return line({{"type", "ready"}}); }

std::string rep_line(int rep, const lm::RepSample& sample) {
  return line({{"type", "rep"},
               {"rep", rep},
               {"prefill_ms", sample.prefill_ms},
               {"decode_ms", sample.decode_ms}});
}

std::string profile_line(const CellProfile& profile) {
  nlohmann::json j = store::profile_to_json(fit_profile(profile));
  j["type"] = "profile";
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string end_line(std::optional<int64_t> peak_alloc_bytes) {
  ordered_json j = {{"type", "end"}};
  if (peak_alloc_bytes && *peak_alloc_bytes > 0) j["peak_alloc_bytes"] = *peak_alloc_bytes;
  return line(j);
}

std::string failure_line(CellStatus status, const std::string& reason) {
  return line({{"type", status == CellStatus::oom ? "oom" : "error"},
               {"reason", reason.empty() ? std::string("(no reason given)") : reason}});
}

CellProfile fit_profile(CellProfile p) {
  p.profiler = fit_name(p.profiler, exec::kMaxProfilerNameBytes);
  size_t dropped = 0;
  for (ProfileStep& s : p.steps) {
    std::map<std::pair<ProfileOpKind, std::string>, size_t> index;  // row of each kind and name
    std::vector<ProfileOp> kept;                                    // in the profile's own order
    for (ProfileOp& op : s.ops_by_name) {
      op.name = fit_name(op.name, exec::kMaxProfileNameBytes);
      auto [it, fresh] = index.try_emplace({op.kind, op.name}, kept.size());
      if (fresh) {
        kept.push_back(std::move(op));
      } else {
        kept[it->second].count += op.count;
        kept[it->second].total_ms += op.total_ms;
      }
    }
    if (kept.size() > exec::kMaxProfileRowsPerStep) {
      std::vector<ProfileOp> by_time = kept;
      std::stable_sort(by_time.begin(), by_time.end(), [](const ProfileOp& a, const ProfileOp& b) {
        return a.total_ms > b.total_ms;
      });
      const double least_kept = by_time[exec::kMaxProfileRowsPerStep - 1].total_ms;
      std::vector<ProfileOp> rows;
      for (ProfileOp& op : kept)
        if (op.total_ms >= least_kept && rows.size() < exec::kMaxProfileRowsPerStep)
          rows.push_back(std::move(op));
      dropped += kept.size() - rows.size();
      kept = std::move(rows);
    }
    s.ops_by_name = std::move(kept);
  }
  if (dropped > 0) {
    const std::string what = std::to_string(dropped) + " rows with the least time left out (" +
                             std::to_string(exec::kMaxProfileRowsPerStep) + " a step at most)";
    p.note = p.note ? *p.note + "; " + what : what;
  }
  return p;
}

}  // namespace pg::worker
