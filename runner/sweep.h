// The runner's public face, free of LibTorch: what a sweep is, and how to run one into a Store.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "store/types.h"

namespace pg {

class Store;

// Every flag of `perfgate run`, also a key of the TOML sweep file. Lists sweep their product.
struct SweepConfig {
  std::vector<std::string> models = {"tiny"};
  std::vector<std::string> dtypes;       // empty = default for the device (fp32 cpu, bf16 cuda)
  std::vector<int> batch_sizes = {1, 4, 8, 16};
  std::vector<int> seq_lens = {64, 256, 512};
  int gen_tokens = 32;
  int warmup = 3;
  int reps = 10;
  std::string device;                    // empty = cuda when present, else cpu
  std::vector<bool> kv_cache = {true};
  std::vector<std::string> attention;    // empty = sdpa where available, else math
  std::vector<bool> cuda_graphs = {false};
  int64_t seed = 0;
  std::string repo = ".";
  std::string db = "perfgate.db";
  std::string csv, json;                 // extra outputs, empty = none
  std::string submit_url, token_file;
  bool quiet = false;
  std::optional<double> peak_bw_gbps;    // override of the device table, for MBU
  std::optional<double> peak_tflops;     // override of the device table, for MFU
};

// The Cartesian product, in the order cells are run.
std::vector<CellKey> expand(const SweepConfig& cfg);

}  // namespace pg
