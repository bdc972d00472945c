// `perfgate run`'s command line and sweep file: the flags (one per setting of config.cpp's table),
// reading --config, and the sweep as stored with a run.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.h"
#include "runner/config.h"
#include "runner/config_detail.h"
#include "runner/lm/artifact.h"

namespace fs = std::filesystem;

namespace pg {

const std::vector<SettingInfo>& run_settings() {
  static const std::vector<SettingInfo> infos = [] {
    std::vector<SettingInfo> v;
    for (const auto& d : detail::setting_defs()) v.push_back(d.info);
    return v;
  }();
  return infos;
}

void add_run_flags(CLI::App& cmd, RunFlags& flags) {
  cmd.add_option("--config", flags.config_path,
                 "TOML sweep file; its keys are these flag names, flags given here override it")
      ->type_name("FILE");
  for (const auto& d : detail::setting_defs()) {
    const SettingInfo& s = d.info;
    if (d.kind == detail::ValueKind::flag) {
      cmd.add_flag("--" + s.name, flags.quiet, s.help);
      continue;
    }
    // Bound through a callback so that "given" and "not given" stay distinguishable.
    auto* opt = cmd.add_option_function<std::string>(
        "--" + s.name, [&flags, name = s.name](const std::string& v) { flags.values[name] = v; },
        s.help);
    opt->type_name(s.value_hint);
    // A literal default shows as CLI11's "=VALUE"; one that depends on the machine as prose.
    if (s.default_text.find(' ') == std::string::npos)
      opt->default_str(s.default_text);
    else
      opt->description(s.help + " (default: " + s.default_text + ")");
  }
}

SweepConfig sweep_config_from_toml(const std::string& toml_text, const std::string& source_name,
                                   const RunFlags& overrides) {
  detail::RawSettings settings = detail::read_toml_settings(toml_text, source_name);
  for (const auto& [name, text] : overrides.values) {
    if (!detail::is_setting(name)) throw UsageError("unknown flag --" + name);
    settings[name] = detail::raw_from_flag(name, text);
  }
  if (overrides.quiet) settings["quiet"] = {"--quiet", {{"true", "--quiet"}}};
  return detail::validate_settings(settings);
}

SweepConfig resolve_sweep_config(const RunFlags& flags) {
  std::string text;
  if (!flags.config_path.empty()) {
    std::error_code ec;
    if (fs::is_directory(flags.config_path, ec))
      throw UsageError(fmt::format("--config: '{}' is a directory", flags.config_path));
    std::ifstream in(flags.config_path, std::ios::binary);
    if (!in) throw UsageError(fmt::format("--config: cannot read '{}'", flags.config_path));
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  return sweep_config_from_toml(text, flags.config_path.empty() ? "(none)" : flags.config_path,
                                flags);
}

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

}  // namespace pg
