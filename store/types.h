// The domain types that flow runner -> store -> stats -> web / ci.
// Dependency-free on purpose: nothing here may pull LibTorch, SQLite or JSON headers.
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pg {

// One point of the sweep. Two cells are "the same cell" exactly when their keys are equal.
struct CellKey {
  std::string model;  // "tiny", "gpt2", "cs336-small", "file:/path/x.safetensors"
  std::string dtype;  // "fp32" | "fp16" | "bf16"
  int batch_size = 1;
  int seq_len = 1;  // prompt length
  int gen_tokens = 32;
  bool kv_cache = true;
  std::string attention;  // "sdpa" | "math"
  bool cuda_graphs = false;
  std::string device;  // "cpu" | "cuda" | "cuda:N"

  auto operator<=>(const CellKey&) const = default;
  bool operator==(const CellKey&) const = default;
};

enum class CellStatus { ok, oom, invalid, error };
enum class RunStatus { complete, incomplete, failed };

// Inline so that stats/, which must not link the SQLite store, shares these names.
inline std::string to_string(CellStatus s) {
  switch (s) {
    case CellStatus::ok:
      return "ok";
    case CellStatus::oom:
      return "oom";
    case CellStatus::invalid:
      return "invalid";
    case CellStatus::error:
      return "error";
  }
  return "error";
}
inline std::string to_string(RunStatus s) {
  switch (s) {
    case RunStatus::complete:
      return "complete";
    case RunStatus::incomplete:
      return "incomplete";
    case RunStatus::failed:
      return "failed";
  }
  return "failed";
}
CellStatus cell_status_from_string(const std::string&);  // throws UsageError
RunStatus run_status_from_string(const std::string&);    // throws UsageError

// Raw samples, kept exactly as measured (milliseconds).
struct CellSamples {
  std::vector<double> prefill_ms;              // one per repetition
  std::vector<std::vector<double>> decode_ms;  // one list per repetition, one entry per step
};

struct CellResult {
  CellKey key;
  CellStatus status = CellStatus::ok;
  std::optional<std::string> reason;      // why oom / invalid / error
  std::map<std::string, double> metrics;  // docs/METRICS.md name -> value; absent = not applicable
  CellSamples samples;
};

// Git state of the code that was measured. Outside a repository, or before the first commit,
// commit/branch/subject/time are nullopt and `state` says why.
struct GitInfo {
  std::string state = "ok";           // "ok" | "not-a-repository" | "no-commit"
  std::optional<std::string> commit;  // 40 hex
  std::optional<std::string> branch;  // branch name, or "detached"
  std::optional<std::string> subject;
  std::optional<std::string> time;  // commit time, ISO 8601 UTC
  bool dirty = false;
  std::string repo_path;
  // remote.origin.url at run time without credentials (common/git_remote.h): commit SHAs on the
  // dashboard link to the repository from it.
  std::optional<std::string> remote;
};

// Flat key -> value fingerprint: device, compute_capability, driver, cuda, cudnn, torch, cpu,
// threads, hostname, os, compiler, build_type, perfgate.
using Environment = std::map<std::string, std::string>;

// The fields whose difference makes two runs incomparable (docs/METRICS.md, "Comparability").
// weights_sha256: the files behind `file:` models (docs/OWN_MODEL_AOTI.md, "Artifact paths").
inline const std::vector<std::string>& comparable_env_fields() {
  static const std::vector<std::string> f = {"device", "driver", "cuda",
                                             "cudnn",  "torch",  "weights_sha256"};
  return f;
}

// The derived metrics of docs/METRICS.md's table, in its order, plus the CPU's memory metric.
const std::vector<std::string>& metric_names();

struct Run {
  int64_t id = 0;
  RunStatus status = RunStatus::incomplete;
  std::string started_at;   // ISO 8601 UTC
  std::string finished_at;  // empty while running
  GitInfo git;
  Environment env;
  std::string config_json = "{}";  // the resolved sweep, for reproduction
  std::vector<CellResult> cells;
};

}  // namespace pg
