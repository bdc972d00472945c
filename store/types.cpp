#include "store/types.h"

#include "common/errors.h"

namespace pg {

const std::vector<std::string>& metric_names() {
  // docs/METRICS.md's table order, then the CPU memory metric (kept last: CSV headers stay stable).
  static const std::vector<std::string> m = {"prefill_ms",
                                             "tpot_ms",
                                             "itl_p50_ms",
                                             "itl_p99_ms",
                                             "decode_tok_s",
                                             "total_tok_s",
                                             "peak_alloc_bytes",
                                             "weight_bytes",
                                             "kv_bytes",
                                             "achieved_bw_gbps",
                                             "mbu",
                                             "prefill_mfu",
                                             "cv",
                                             "peak_rss_growth_bytes"};
  return m;
}

CellStatus cell_status_from_string(const std::string& s) {
  if (s == "ok") return CellStatus::ok;
  if (s == "oom") return CellStatus::oom;
  if (s == "invalid") return CellStatus::invalid;
  if (s == "error") return CellStatus::error;
  throw UsageError("unknown cell status '" + s + "' (expected ok|oom|invalid|error)");
}

RunStatus run_status_from_string(const std::string& s) {
  if (s == "complete") return RunStatus::complete;
  if (s == "incomplete") return RunStatus::incomplete;
  if (s == "failed") return RunStatus::failed;
  throw UsageError("unknown run status '" + s + "' (expected complete|incomplete|failed)");
}

}  // namespace pg
