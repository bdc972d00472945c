#include "runner/sweep_config.h"

#include <nlohmann/json.hpp>

#include "runner/lm/artifact.h"

namespace pg::runner {

std::string sweep_config_json(const SweepConfig& cfg) {
  auto onoff = [](const std::vector<bool>& v) {
    std::vector<std::string> out;
    for (bool b : v) out.push_back(b ? "on" : "off");
    return out;
  };
  // The models as given, so the stored config reruns as is (an aoti: key is the sidecar's name).
  std::vector<std::string> typed_models;
  for (const auto& m : cfg.models) {
    const lm::Artifact* a = lm::find_artifact(m);
    typed_models.push_back(a ? a->typed : m);
  }
  nlohmann::json j = {
      {"model", typed_models},
      {"dtype", cfg.dtypes},
      {"batch-sizes", cfg.batch_sizes},
      {"seq-lens", cfg.seq_lens},
      {"gen-tokens", cfg.gen_tokens},
      {"warmup", cfg.warmup},
      {"reps", cfg.reps},
      {"device", cfg.device},
      {"kv-cache", onoff(cfg.kv_cache)},
      {"attention", cfg.attention},
      {"cuda-graphs", onoff(cfg.cuda_graphs)},
      {"seed", cfg.seed},
      {"repo", cfg.repo},
      {"db", cfg.db},
  };
  if (!cfg.csv.empty()) j["csv"] = cfg.csv;
  if (!cfg.json.empty()) j["json"] = cfg.json;
  if (!cfg.submit_url.empty()) j["submit"] = cfg.submit_url;
  if (!cfg.profile) j["profile"] = "off";  // on, the default, is left out as before it existed
  if (cfg.peak_bw_gbps) j["peak-bw-gbps"] = *cfg.peak_bw_gbps;
  if (cfg.peak_tflops) j["peak-tflops"] = *cfg.peak_tflops;
  if (!cfg.exec.empty()) {
    j["exec"] = cfg.exec;
    j["exec-timeout"] = cfg.exec_timeout_s;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pg::runner
