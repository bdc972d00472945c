#include "fuzz_targets.h"

#include <fstream>
#include <iterator>
#include <map>

#include "common/errors.h"
#include "runner/config.h"
#include "runner/lm/gpt2_checkpoint.h"
#include "store/run_json.h"

namespace pg::fuzz {

void toml_sweep(std::string_view bytes) {
  try {
    sweep_config_from_toml(std::string(bytes), "fuzz.toml", runner::RunFlags{});
  } catch (const UsageError&) {
  }
}

void safetensors_model(std::string_view bytes, const std::string& scratch) {
  {
    std::ofstream out(scratch, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    lm::inspect_gpt2_checkpoint(scratch);
  } catch (const UsageError&) {
  }
}

std::vector<std::string> safetensors_seeds(const std::string& scratch) {
  lm::ModelConfig cfg;
  cfg.n_layer = 2;
  cfg.n_head = 2;
  cfg.d_model = 8;
  cfg.d_ff = 16;
  cfg.vocab = 16;
  cfg.context = 8;
  std::vector<std::string> seeds;
  for (const std::string prefix : {"", "transformer."}) {
    std::map<std::string, lm::SafetensorsBlob> blobs;
    for (const auto& [name, shape] : lm::gpt2_expected_tensors(cfg)) {
      size_t n = 1;
      for (auto d : shape) n *= static_cast<size_t>(d);
      blobs[prefix + name] = {"F32", shape, std::string(n * 4, '\0')};
    }
    lm::write_safetensors(scratch, blobs, {{"n_head", "2"}});
    std::ifstream in(scratch, std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return seeds;
}

void ingest_json(std::string_view bytes) {
  try {
    store::runs_from_json(std::string(bytes), "request body");
  } catch (const UsageError&) {
  }
}

}  // namespace pg::fuzz
