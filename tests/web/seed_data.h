// Synthetic but well-formed runs for the web tests, the browser test and the web benchmark: a
// linear history of commits, each measured on one or more environments, with a step regression
// where asked. Numbers are made up; their shapes (repetitions, steps, metrics) are the runner's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::webtest {

struct SeedSpec {
  int commits = 12;
  int envs = 1;             // environments (device names); each is its own set of series
  int runs_per_commit = 1;  // repeated runs of one commit on one environment
  std::vector<std::string> models = {"tiny"};
  std::vector<int> batch_sizes = {1, 4};
  std::vector<int> seq_lens = {16};
  int gen_tokens = 8;
  int reps = 5;
  int step_at = -1;                      // commit index from which tpot is slower
  double step_factor = 1.3;              // ... by this factor
  std::vector<std::string> step_models;  // models the step applies to (empty: all)
  int outlier_at = -1;                   // commit index whose first repetition is much slower
  double outlier_factor = 10.0;          // ... by this factor (its median barely moves)
  bool hostile = false;                  // a <script> subject, a branch with quotes
  uint64_t seed = 1;
  int first_commit = 0;  // offsets commit numbering (distinct documents for ingest)
};

// 40 hex digits, deterministic per (index, salt).
std::string commit_sha(int index, uint64_t salt = 0);
std::string commit_subject(int index, bool hostile);

// Every run of the spec, in history order (commit, then environment, then repetition).
std::vector<Run> make_runs(const SeedSpec& spec);
Run make_run(const SeedSpec& spec, int commit, int env, int repeat);

// Samples in one run: prefill + decode step values.
size_t sample_count(const Run& run);

}  // namespace pg::webtest
