#include "test_util.h"

#include <sqlite3.h>
#include <unistd.h>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "store/store.h"
#include "tests/common/sqlite_query.h"

namespace pg::test {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

GitInfo sample_git(int variant) {
  GitInfo g;
  g.state = "ok";
  g.commit = variant == 0 ? "0123456789abcdef0123456789abcdef01234567"
                          : "89abcdef0123456789abcdef0123456789abcdef";
  g.branch = variant == 0 ? "main" : "feature/x";
  g.subject = "Speed up decode, \"quoted\", <script>alert(1)</script>";
  g.time = variant == 0 ? "2024-05-01T10:00:00Z" : "2024-05-02T10:00:00Z";
  g.dirty = variant != 0;
  g.repo_path = "/src/repo";
  return g;
}

Environment sample_env(const std::string& device) {
  return {{"device", device},   {"driver", "550.54"}, {"cuda", "13.0"},
          {"cudnn", "9.1.0"},   {"torch", "2.11.0"},  {"cpu", "AMD EPYC"},
          {"hostname", "gpu1"}, {"threads", "16"},    {"perfgate", "0.1.0"}};
}

CellResult sample_cell(int batch_size, int seq_len, int reps, int gen_tokens, double seed) {
  CellResult c;
  c.key = {"tiny", "fp32", batch_size, seq_len, gen_tokens, true, "math", false, "cpu"};
  std::mt19937_64 rng(static_cast<uint64_t>(seed * 1000) + batch_size * 31 + seq_len);
  std::uniform_real_distribution<double> u(0.1, 0.2);
  for (int r = 0; r < reps; ++r) {
    c.samples.prefill_ms.push_back(1.0 + u(rng));
    std::vector<double> steps;
    for (int s = 0; s < gen_tokens - 1; ++s) steps.push_back(u(rng) * seed);
    c.samples.decode_ms.push_back(steps);
  }
  c.metrics = {{"prefill_ms", 1.15},
               {"tpot_ms", 0.15 * seed},
               {"decode_tok_s", 6666.666666666667},
               {"peak_alloc_bytes", 123456789.0},
               {"cv", 0.0123}};
  return c;
}

Run sample_run(int variant) {
  Run r;
  r.status = RunStatus::complete;
  r.started_at = "2024-05-01T10:05:00Z";
  r.finished_at = "2024-05-01T10:06:00Z";
  r.git = sample_git(variant);
  r.env = sample_env();
  r.config_json = R"({"model":["tiny"],"reps":3})";
  r.cells.push_back(sample_cell(1, 16, 3, 5, 1.0 + variant));
  CellResult oom = sample_cell(64, 512, 0, 5, 1.0);
  oom.status = CellStatus::oom;
  oom.reason = "CUDA out of memory, tried to allocate 2.00 GiB";
  oom.metrics.clear();
  r.cells.push_back(oom);
  r.cells.push_back(sample_cell(4, 64, 3, 5, 2.0 + variant));
  return r;
}

int64_t write_run(store::Store& s, const Run& r, bool finish) {
  const int64_t id = s.begin_run(r.git, r.env, r.config_json, "", r.ab);
  for (const auto& c : r.cells) s.add_cell(id, c);
  if (finish) s.finish_run(id, r.status);
  return id;
}

int64_t query_int(store::Store& s, const char* sql) { return testing::query_int(s.handle(), sql); }

}  // namespace pg::test
