#include "store/validate.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/errors.h"
#include "common/utc_time.h"

namespace pg::store {
namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw UsageError(where + ": " + what);
}

bool is_digits(const std::string& s, size_t from, size_t n) {
  if (from + n > s.size()) return false;
  for (size_t i = from; i < from + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

}  // namespace

bool is_commit_sha(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

void validate_key(const CellKey& k, const std::string& where) {
  const std::string w = where + "/key";
  if (k.model.empty()) bad(w + "/model", "must not be empty");
  if (k.dtype != "fp32" && k.dtype != "fp16" && k.dtype != "bf16")
    bad(w + "/dtype", "'" + k.dtype + "' is not one of fp32|fp16|bf16");
  if (k.batch_size < 1) bad(w + "/batch_size", "must be >= 1");
  if (k.seq_len < 1) bad(w + "/seq_len", "must be >= 1");
  if (k.gen_tokens < 1) bad(w + "/gen_tokens", "must be >= 1");
  if (k.attention != "sdpa" && k.attention != "math")
    bad(w + "/attention", "'" + k.attention + "' is not one of sdpa|math");
  bool device_ok = k.device == "cpu" || k.device == "cuda";
  if (!device_ok && k.device.rfind("cuda:", 0) == 0 && k.device.size() > 5 && k.device.size() <= 8)
    device_ok = is_digits(k.device, 5, k.device.size() - 5);
  if (!device_ok) bad(w + "/device", "'" + k.device + "' is not cpu, cuda or cuda:N");
}

void validate_cell(const CellResult& c, const std::string& where) {
  validate_key(c.key, where);
  for (const auto& [name, value] : c.metrics) {
    if (name.empty()) bad(where + "/metrics", "a metric has an empty name");
    if (!std::isfinite(value)) bad(where + "/metrics/" + name, "must be a finite number");
  }
  const auto& s = c.samples;
  const std::string ws = where + "/samples";
  if (s.prefill_ms.size() != s.decode_ms.size())
    bad(ws, std::to_string(s.prefill_ms.size()) + " prefill samples but " +
                std::to_string(s.decode_ms.size()) + " decode lists (one of each per repetition)");
  const size_t steps = static_cast<size_t>(c.key.gen_tokens - 1);
  for (size_t r = 0; r < s.prefill_ms.size(); ++r) {
    const double v = s.prefill_ms[r];
    if (!std::isfinite(v) || v < 0)
      bad(ws + "/prefill_ms/" + std::to_string(r), "must be a finite number >= 0");
  }
  if (!s.ab_position.empty() && s.ab_position.size() != s.prefill_ms.size())
    bad(ws + "/ab_position", std::to_string(s.ab_position.size()) + " positions but " +
                                 std::to_string(s.prefill_ms.size()) +
                                 " repetitions (one per repetition of an A/B run)");
  for (size_t r = 0; r < s.ab_position.size(); ++r)
    if (s.ab_position[r] != 0 && s.ab_position[r] != 1)
      bad(ws + "/ab_position/" + std::to_string(r), "must be 0 (ran first) or 1 (ran second)");
  for (size_t r = 0; r < s.decode_ms.size(); ++r) {
    const auto& steps_ms = s.decode_ms[r];
    const std::string wr = ws + "/decode_ms/" + std::to_string(r);
    if (steps_ms.size() != steps)
      bad(wr, "has " + std::to_string(steps_ms.size()) + " decode steps, but gen_tokens " +
                  std::to_string(c.key.gen_tokens) + " means " + std::to_string(steps));
    for (size_t i = 0; i < steps_ms.size(); ++i)
      if (!std::isfinite(steps_ms[i]) || steps_ms[i] < 0)
        bad(wr + "/" + std::to_string(i), "must be a finite number >= 0");
  }
}

bool is_run_uuid(const std::string& s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

void validate_run(const Run& run, const std::string& where) {
  if (!run.uuid.empty() && !is_run_uuid(run.uuid))
    bad(where + "/uuid", "'" + run.uuid + "' is not 32 hex digits or absent");
  if (run.ab) {
    const std::string wa = where + "/ab";
    if (!is_run_uuid(run.ab->uuid))
      bad(wa + "/uuid", "'" + run.ab->uuid + "' is not 32 hex digits");
    if (run.ab->side != "base" && run.ab->side != "head")
      bad(wa + "/side", "'" + run.ab->side + "' is not base or head");
    if (run.ab->design != "abba") bad(wa + "/design", "'" + run.ab->design + "' is not abba");
  }
  for (size_t i = 0; i < run.cells.size() && !run.ab; ++i)
    if (!run.cells[i].samples.ab_position.empty())
      bad(where + "/cells/" + std::to_string(i) + "/samples/ab_position",
          "is given, but the run is not part of an A/B run (no ab)");
  const auto& g = run.git;
  if (g.commit && !is_commit_sha(*g.commit))
    bad(where + "/git/commit", "'" + *g.commit + "' is not a 40-hex-digit SHA or null");
  if (g.state.empty()) bad(where + "/git/state", "must not be empty");
  if (g.state == "ok" && !g.commit) bad(where + "/git/commit", "is null but git.state is \"ok\"");
  if (g.state != "ok" && g.commit)
    bad(where + "/git/state", "is \"" + g.state + "\" but a commit is given");
  int64_t t = 0;
  if (g.time && !parse_iso8601(*g.time, &t))
    bad(where + "/git/time", "'" + *g.time + "' is not an ISO 8601 timestamp");
  if (!run.started_at.empty() && !parse_iso8601(run.started_at, &t))
    bad(where + "/started_at", "'" + run.started_at + "' is not an ISO 8601 timestamp");
  if (!run.finished_at.empty() && !parse_iso8601(run.finished_at, &t))
    bad(where + "/finished_at", "'" + run.finished_at + "' is not an ISO 8601 timestamp");
  for (size_t i = 0; i < run.cells.size(); ++i)
    validate_cell(run.cells[i], where + "/cells/" + std::to_string(i));
}

}  // namespace pg::store
