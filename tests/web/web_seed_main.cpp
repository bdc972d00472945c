// web_seed: writes a perfgate database (through the Store API, one transaction) or export
// documents for ingest, from seed_data.h. Used by the browser test and bench/web_bench.sh.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "seed_data.h"
#include "store/run_json.h"
#include "store/store.h"

int main(int argc, char** argv) {
  CLI::App app{"web_seed: synthetic perfgate runs for web tests and benchmarks"};
  pg::webtest::SeedSpec spec;
  std::string db, json_dir;
  int docs = 0, runs_per_doc = 10;
  app.add_option("--db", db, "database to create (must not exist)");
  app.add_option("--commits", spec.commits)->capture_default_str();
  app.add_option("--envs", spec.envs)->capture_default_str();
  app.add_option("--runs-per-commit", spec.runs_per_commit)->capture_default_str();
  app.add_option("--models", spec.models)->delimiter(',');
  app.add_option("--batch-sizes", spec.batch_sizes)->delimiter(',');
  app.add_option("--seq-lens", spec.seq_lens)->delimiter(',');
  app.add_option("--gen-tokens", spec.gen_tokens)->capture_default_str();
  app.add_option("--reps", spec.reps)->capture_default_str();
  app.add_option("--step-at", spec.step_at, "commit index where tpot steps up");
  app.add_option("--step-factor", spec.step_factor)->capture_default_str();
  app.add_option("--step-models", spec.step_models, "models the step applies to (default all)")
      ->delimiter(',');
  app.add_flag("--hostile", spec.hostile, "script-tag subjects and a branch with quotes");
  app.add_option("--outlier-at", spec.outlier_at,
                 "commit index whose first repetition is --outlier-factor times slower");
  app.add_option("--outlier-factor", spec.outlier_factor)->capture_default_str();
  app.add_option("--seed", spec.seed)->capture_default_str();
  app.add_option("--json-dir", json_dir, "write export documents here instead of a database");
  app.add_option("--docs", docs, "documents to write with --json-dir");
  app.add_option("--runs-per-doc", runs_per_doc)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    if (!json_dir.empty()) {
      std::filesystem::create_directories(json_dir);
      size_t samples = 0;
      for (int d = 0; d < docs; ++d) {
        std::vector<pg::Run> runs;
        for (int r = 0; r < runs_per_doc; ++r) {
          pg::webtest::SeedSpec s = spec;
          s.first_commit = spec.first_commit + d * runs_per_doc;
          runs.push_back(pg::webtest::make_run(s, r, 0, 0));
          samples += pg::webtest::sample_count(runs.back());
        }
        std::ofstream(json_dir + "/doc_" + std::to_string(d) + ".json")
            << pg::store::runs_to_json(runs, true);
      }
      std::printf("documents %d runs_per_doc %d samples %zu\n", docs, runs_per_doc, samples);
      return 0;
    }
    if (db.empty()) {
      std::fprintf(stderr, "web_seed: give --db FILE or --json-dir DIR\n");
      return 2;
    }
    if (std::filesystem::exists(db)) {
      std::fprintf(stderr, "web_seed: %s exists; refusing to add to it\n", db.c_str());
      return 2;
    }
    const auto runs = pg::webtest::make_runs(spec);
    size_t samples = 0;
    for (const auto& r : runs) samples += pg::webtest::sample_count(r);
    pg::store::Store store(db);
    const auto t0 = std::chrono::steady_clock::now();
    store.import_runs(runs);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("runs %zu samples %zu import_s %.3f samples_per_s %.0f\n", runs.size(), samples, s,
                samples / s);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "web_seed: %s\n", e.what());
    return 4;
  }
}
