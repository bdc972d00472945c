#include "seed_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <random>

#include "common/descriptive.h"

namespace pg::webtest {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string iso_time(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string commit_sha(int index, uint64_t salt) {
  std::string s;
  char buf[17];
  for (int part = 0; part < 3; ++part) {
    std::snprintf(buf, sizeof buf, "%016llx",
                  static_cast<unsigned long long>(mix(mix(index * 3 + part) ^ salt)));
    s += buf;
  }
  return s.substr(0, 40);
}

std::string commit_subject(int index, bool hostile) {
  if (hostile && index == 2) return "<script>alert(1)</script>";
  if (hostile && index == 3)
    return "Quote \"double\" & 'single' </script><img src=x onerror=alert(2)>";
  return "Commit " + std::to_string(index) + ": tune the decode loop";
}

Run make_run(const SeedSpec& spec, int commit, int env, int repeat) {
  const int c = commit + spec.first_commit;
  Run run;
  run.status = RunStatus::complete;
  const int64_t t0 = 1704067200 + int64_t{c} * 3600;  // 2024-01-01, one commit an hour
  run.started_at = iso_time(t0 + 600 + env * 60 + repeat);
  run.finished_at = iso_time(t0 + 900 + env * 60 + repeat);
  run.git.state = "ok";
  run.git.commit = commit_sha(c, spec.seed);
  run.git.branch = spec.hostile && commit % 4 == 1 ? "feat/\"quoted\"&'branch'<b>" : "main";
  run.git.subject = commit_subject(c, spec.hostile);
  run.git.time = iso_time(t0);
  run.git.dirty = false;
  run.git.repo_path = "/src/project";
  run.env = {{"device", "Seed GPU " + std::to_string(env)},
             {"compute_capability", "9.0"},
             {"driver", "580.65"},
             {"cuda", "13.0"},
             {"cudnn", "9.13"},
             {"torch", "2.11.0"},
             {"cpu", "Seed CPU"},
             {"threads", "16"},
             {"hostname", "bench-" + std::to_string(env)},
             {"os", "Linux"},
             {"compiler", "GCC 12.2"},
             {"build_type", "RelWithDebInfo"},
             {"perfgate", "0.1.0"}};
  run.config_json = R"({"seed":)" + std::to_string(spec.seed) + "}";
  std::mt19937_64 rng(mix(spec.seed ^ mix(c * 131 + env * 17 + repeat)));
  std::normal_distribution<double> noise(0.0, 0.01);
  for (const auto& model : spec.models)
    for (int b : spec.batch_sizes)
      for (int p : spec.seq_lens) {
        CellResult cell;
        cell.key = {model, "bf16", b, p, spec.gen_tokens, true, "sdpa", false, "cuda"};
        cell.status = CellStatus::ok;
        double tpot =
            (0.6 + 0.05 * b + 0.001 * p) * (1.0 + 0.1 * env) * (model == "tiny" ? 1.0 : 3.0);
        const bool stepped_model =
            spec.step_models.empty() || std::find(spec.step_models.begin(), spec.step_models.end(),
                                                  model) != spec.step_models.end();
        if (spec.step_at >= 0 && commit >= spec.step_at && stepped_model) tpot *= spec.step_factor;
        const double prefill = 0.5 + 0.004 * b * p;
        std::vector<double> rep_tpot, all_steps;
        for (int r = 0; r < spec.reps; ++r) {
          cell.samples.prefill_ms.push_back(prefill * (1 + noise(rng)));
          std::vector<double> steps;
          const double slow = commit == spec.outlier_at && r == 0 && repeat == 0 && env == 0
                                  ? spec.outlier_factor
                                  : 1.0;
          for (int s = 0; s < spec.gen_tokens - 1; ++s)
            steps.push_back(slow * tpot * (1 + noise(rng)));
          double sum = 0;
          for (double x : steps) sum += x;
          rep_tpot.push_back(sum / steps.size());
          all_steps.insert(all_steps.end(), steps.begin(), steps.end());
          cell.samples.decode_ms.push_back(std::move(steps));
        }
        const double med_tpot = median(rep_tpot), med_prefill = median(cell.samples.prefill_ms);
        double mean = 0, var = 0;
        for (double x : rep_tpot) mean += x / rep_tpot.size();
        for (double x : rep_tpot) var += (x - mean) * (x - mean) / rep_tpot.size();
        const int steps = spec.gen_tokens - 1;
        cell.metrics = {{"prefill_ms", med_prefill},
                        {"tpot_ms", med_tpot},
                        {"itl_p50_ms", quantile(all_steps, 0.5)},
                        {"itl_p99_ms", quantile(all_steps, 0.99)},
                        {"decode_tok_s", b * steps / (med_tpot * steps / 1000.0)},
                        {"total_tok_s",
                         b * (p + spec.gen_tokens) / ((med_prefill + med_tpot * steps) / 1000.0)},
                        {"peak_alloc_bytes", 1.5e8 + 2.0e5 * b * p},
                        {"weight_bytes", 1.2e8},
                        {"kv_bytes", 4096.0 * b * (p + spec.gen_tokens)},
                        {"cv", std::sqrt(var) / mean}};
        run.cells.push_back(std::move(cell));
      }
  return run;
}

std::vector<Run> make_runs(const SeedSpec& spec) {
  std::vector<Run> runs;
  runs.reserve(static_cast<size_t>(spec.commits) * spec.envs * spec.runs_per_commit);
  for (int c = 0; c < spec.commits; ++c)
    for (int e = 0; e < spec.envs; ++e)
      for (int r = 0; r < spec.runs_per_commit; ++r) runs.push_back(make_run(spec, c, e, r));
  return runs;
}

size_t sample_count(const Run& run) {
  size_t n = 0;
  for (const auto& c : run.cells) {
    n += c.samples.prefill_ms.size();
    for (const auto& d : c.samples.decode_ms) n += d.size();
  }
  return n;
}

}  // namespace pg::webtest
