// The domain types that flow runner -> store -> stats -> web / report: a run, its cells, their raw
// samples, and what was recorded about the code and the machine. Plain structs: nothing here pulls
// LibTorch, SQLite or JSON headers, so every layer may include it.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cell_key.h"
#include "core/profile.h"
#include "core/status.h"

namespace pg {

// Raw samples, kept exactly as measured (milliseconds).
struct CellSamples {
  std::vector<double> prefill_ms;              // one per repetition
  std::vector<std::vector<double>> decode_ms;  // one list per repetition, one entry per step
  // A/B runs only (`perfgate ab`, docs/AB.md): repetition i of a cell is pair i with repetition i
  // of the same cell in the other side's run; ab_position[i] is 0 when this side ran first in
  // that pair, 1 when second. Empty for an ordinary run.
  std::vector<int> ab_position;
};

struct CellResult {
  CellKey key;
  CellStatus status = CellStatus::ok;
  std::optional<std::string> reason;      // why oom / invalid / error
  std::map<std::string, double> metrics;  // core/metrics.h name -> value; absent = not applicable
  CellSamples samples;
  // The untimed profiled sequence (core/profile.h); absent with --profile off, or for an --exec
  // benchmark that printed no profile line (docs/PROTOCOL.md).
  std::optional<CellProfile> profile;
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
const std::vector<std::string>& comparable_env_fields();

// What ties the two runs of one A/B run together (`perfgate ab`): the same uuid on both, one side
// each. `design` names how the order of each pair was drawn ("abba": blocks of two pairs, AB then
// BA or BA then AB by a seeded coin), `seed` the seed that drew it.
struct AbPairing {
  std::string uuid;  // 32 lowercase hex digits, shared by the base and the head run
  std::string side;  // "base" | "head"
  std::string design = "abba";
  uint64_t seed = 0;
  bool operator==(const AbPairing&) const = default;
};

struct Run {
  int64_t id = 0;  // in one database
  // The run's identity across databases: 128 random bits as 32 lowercase hex digits, given by the
  // store that first holds the run; empty in a run that has none yet (docs/FORMATS.md, `uuid`).
  std::string uuid;
  RunStatus status = RunStatus::incomplete;
  std::string started_at;   // ISO 8601 UTC
  std::string finished_at;  // empty while running
  GitInfo git;
  Environment env;
  std::string config_json = "{}";  // the resolved sweep, for reproduction
  std::optional<AbPairing> ab;     // set on the two runs of an A/B run
  std::vector<CellResult> cells;
};

}  // namespace pg
