// A sweep as `perfgate run` resolved it: the settings that say which cells to measure and how, and
// their JSON as stored with the run. Read by runner/config.h, which makes one, and runner/sweep.h,
// which runs one; LibTorch-free.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pg::runner {

// Every setting of `perfgate run` (a flag, and a key of the TOML sweep file), resolved and
// validated by runner/config.h. Lists sweep their product.
struct SweepConfig {
  std::vector<std::string> models = {"tiny"};
  std::vector<std::string> dtypes;  // empty = default for the device (fp32 cpu, bf16 cuda)
  std::vector<int> batch_sizes = {1, 4, 8, 16};
  std::vector<int> seq_lens = {64, 256, 512};
  int gen_tokens = 32;
  int warmup = 3;
  int reps = 10;
  std::string device;  // empty = cuda when present, else cpu
  std::vector<bool> kv_cache = {true};
  std::vector<std::string> attention;  // empty = sdpa where available, else math
  std::vector<bool> cuda_graphs = {false};
  bool profile = true;  // one untimed profiled sequence per cell (asked of an --exec benchmark)
  int64_t seed = 0;
  std::string repo = ".";
  std::string db = "perfgate.db";
  std::string csv, json;  // extra outputs, empty = none
  std::string submit_url, token_file;
  bool quiet = false;
  std::optional<double> peak_bw_gbps;  // override of the device table, for MBU
  std::optional<double> peak_tflops;   // override of the device table, for MFU
  // --exec: the user's benchmark measures every cell (docs/PROTOCOL.md); models are then names.
  std::string exec;
  double exec_timeout_s = 900;  // per cell
  // The settings the sweep file gave (and no flag overrode), each with the file and line of its
  // key ("sweep.toml:6"): a message names these as the file's keys, the others as flags.
  std::map<std::string, std::string> given_in_file;
};

// The resolved sweep as JSON text (stored with the run, so it can be reproduced).
std::string sweep_config_json(const SweepConfig& cfg);

}  // namespace pg::runner
