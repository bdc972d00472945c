// Reading the worker's cell line (docs/PROTOCOL.md, "The cell" and "Worker mode").
#include "runner/worker/worker_cell.h"

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.h"

namespace pg::worker {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& why) { throw UsageError("cell line: " + why); }

std::string shown(const json& v) {
  const std::string d = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return d.size() > 60 ? d.substr(0, 60) + "..." : d;
}

const json& field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) bad(std::string("\"") + key + "\" is missing");
  return *it;
}

std::string text(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string() || v.get<std::string>().empty())
    bad(std::string("\"") + key + "\" must be a non-empty string, got " + shown(v));
  return v.get<std::string>();
}

int64_t integer(const json& j, const char* key, int64_t lo, int64_t hi) {
  const json& v = field(j, key);
  if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
    bad(std::string("\"") + key + "\" must be an integer from " + std::to_string(lo) + " to " +
        std::to_string(hi) + ", got " + shown(v));
  return v.get<int64_t>();
}

int small_integer(const json& j, const char* key) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return static_cast<int>(integer(j, key, -kMax, kMax));
}

bool flag(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_boolean()) bad(std::string("\"") + key + "\" must be true or false, got " + shown(v));
  return v.get<bool>();
}

}  // namespace

WorkerCell read_worker_cell(const std::string& line, const std::string& cwd) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception&) {
    bad("not valid JSON: " + line.substr(0, 80));
  }
  if (!j.is_object()) bad("not a JSON object");
  static const std::set<std::string> known = {"protocol",   "worker",      "model",  "batch_size",
                                              "prompt_len", "gen_tokens",  "warmup", "reps",
                                              "device",     "dtype",       "seed",   "kv_cache",
                                              "attention",  "cuda_graphs", "repo",   "profile"};
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) bad("unknown key \"" + k.substr(0, 60) + "\"");

  const int64_t protocol = integer(j, "protocol", 1, std::numeric_limits<int>::max());
  if (protocol < kWorkerProtocolVersion)
    bad("protocol " + std::to_string(protocol) + " has no worker mode (it came with version " +
        std::to_string(kWorkerProtocolVersion) + ")");
  if (!flag(j, "worker"))
    bad("\"worker\" is false: perfgate's worker serves worker mode only (one-shot cells run in "
        "perfgate run)");

  WorkerCell c;
  c.key.model = text(j, "model");
  c.key.batch_size = small_integer(j, "batch_size");
  c.key.seq_len = small_integer(j, "prompt_len");
  c.key.gen_tokens = small_integer(j, "gen_tokens");
  c.key.device = text(j, "device");
  c.key.dtype = text(j, "dtype");
  c.key.kv_cache = flag(j, "kv_cache");
  c.key.attention = text(j, "attention");
  c.key.cuda_graphs = flag(j, "cuda_graphs");
  c.opt.warmup = small_integer(j, "warmup");
  c.opt.reps = small_integer(j, "reps");
  c.opt.seed =
      integer(j, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  c.opt.profile = flag(j, "profile");

  namespace fs = std::filesystem;
  fs::path repo = j.contains("repo") ? fs::path(text(j, "repo")) : fs::path(cwd);
  if (repo.is_relative()) repo = fs::path(cwd) / repo;
  c.repo = repo.lexically_normal().string();
  while (c.repo.size() > 1 && c.repo.back() == '/') c.repo.pop_back();
  return c;
}

}  // namespace pg::worker
