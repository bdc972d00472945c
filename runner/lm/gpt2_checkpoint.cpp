#include "runner/lm/gpt2_checkpoint.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "common/errors.h"

namespace pg::lm {
namespace {

constexpr std::string_view kPrefix = "transformer.";

// Buffers and duplicates that Hugging Face may save beside the weights; we read none of them.
bool ignorable(const std::string& canonical) {
  static const std::regex buffers(R"(h\.\d+\.attn\.(bias|masked_bias))");
  return canonical == "lm_head.weight" || std::regex_match(canonical, buffers);
}

// Hugging Face keeps the model's hyper-parameters in config.json beside model.safetensors.
nlohmann::json sibling_config(const std::string& path) {
  const auto cfg_path = std::filesystem::path(path).parent_path() / "config.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(cfg_path, ec)) return nlohmann::json::object();
  std::ifstream in(cfg_path);
  try {
    auto j = nlohmann::json::parse(in);
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range
    throw UsageError("'" + cfg_path.string() + "' (config of model file '" + path +
                     "') is not valid JSON: " + e.what());
  }
}

int64_t infer_n_head(const SafetensorsFile& f, const nlohmann::json& config, int64_t d_model) {
  std::string source;
  int64_t n_head = 0;
  if (auto it = f.metadata.find("n_head"); it != f.metadata.end()) {
    source = "__metadata__ n_head";
    try {
      n_head = std::stoll(it->second);
    } catch (const std::exception&) {
      fail_model_file(f.path, "__metadata__ n_head '" + it->second + "' is not an integer");
    }
  } else if (config.contains("n_head") && config["n_head"].is_number_integer()) {
    source = "config.json n_head";
    n_head = config["n_head"].get<int64_t>();
  } else {
    source = "d_model / 64 (no n_head in __metadata__ or config.json)";
    n_head = d_model % 64 == 0 ? d_model / 64 : 0;
  }
  if (n_head <= 0 || d_model % n_head != 0)
    fail_model_file(f.path, "n_head from " + source + " is " + std::to_string(n_head) +
                                ", which does not divide d_model " + std::to_string(d_model));
  return n_head;
}

const std::vector<int64_t>& shape_of(const Gpt2Checkpoint& c, const std::string& canonical,
                                     size_t rank) {
  auto it = c.names.find(canonical);
  if (it == c.names.end()) fail_model_file(c.file.path, "missing tensor '" + canonical + "'");
  const auto& shape = c.file.tensors.at(it->second).shape;
  if (shape.size() != rank)
    fail_model_file(c.file.path, "tensor '" + it->second + "' has shape " + shape_string(shape) +
                                     ", expected " + std::to_string(rank) + " dimensions");
  return shape;
}

}  // namespace

std::map<std::string, std::vector<int64_t>> gpt2_expected_tensors(const ModelConfig& cfg) {
  const int64_t d = cfg.d_model, ff = cfg.d_ff;
  std::map<std::string, std::vector<int64_t>> t = {{"wte.weight", {cfg.vocab, d}},
                                                   {"wpe.weight", {cfg.context, d}},
                                                   {"ln_f.weight", {d}},
                                                   {"ln_f.bias", {d}}};
  for (int64_t i = 0; i < cfg.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    t[h + "ln_1.weight"] = {d};
    t[h + "ln_1.bias"] = {d};
    t[h + "attn.c_attn.weight"] = {d, 3 * d};
    t[h + "attn.c_attn.bias"] = {3 * d};
    t[h + "attn.c_proj.weight"] = {d, d};
    t[h + "attn.c_proj.bias"] = {d};
    t[h + "ln_2.weight"] = {d};
    t[h + "ln_2.bias"] = {d};
    t[h + "mlp.c_fc.weight"] = {d, ff};
    t[h + "mlp.c_fc.bias"] = {ff};
    t[h + "mlp.c_proj.weight"] = {ff, d};
    t[h + "mlp.c_proj.bias"] = {d};
  }
  return t;
}

Gpt2Checkpoint inspect_gpt2_checkpoint(const std::string& path) {
  Gpt2Checkpoint c;
  c.file = read_safetensors_header(path);
  for (const auto& [name, entry] : c.file.tensors) {
    std::string canonical = name.starts_with(kPrefix) ? name.substr(kPrefix.size()) : name;
    if (!c.names.emplace(canonical, name).second)
      fail_model_file(
          path, "tensor '" + name + "' appears both with and without the 'transformer.' prefix");
  }

  static const std::regex layer_name(R"(h\.(\d+)\..*)");
  // Layer i needs all of layers 0..i, a dozen tensors each, so an index beyond the header's
  // tensor count cannot be right: refuse it before anything is sized by it.
  const auto max_index = static_cast<int64_t>(c.names.size());
  int64_t n_layer = 0;
  for (const auto& [canonical, name] : c.names) {
    std::smatch m;
    if (!std::regex_match(canonical, m, layer_name)) continue;
    const std::string digits = m[1].str();
    int64_t index = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || end != digits.data() + digits.size() || index >= max_index)
      fail_model_file(path, "tensor '" + name + "': layer index " + digits +
                                " is larger than the header's " + std::to_string(max_index) +
                                " tensors allow");
    n_layer = std::max<int64_t>(n_layer, index + 1);
  }
  const auto wte = shape_of(c, "wte.weight", 2);
  const auto wpe = shape_of(c, "wpe.weight", 2);
  ModelConfig& cfg = c.config;
  cfg.name = "file:" + path;
  cfg.family = Family::gpt2;
  cfg.vocab = wte[0];
  cfg.d_model = wte[1];
  cfg.context = wpe[0];
  cfg.n_layer = n_layer;
  if (n_layer == 0)
    fail_model_file(path, "missing tensor 'h.0.ln_1.weight' (no transformer layers found)");
  cfg.d_ff = shape_of(c, "h.0.mlp.c_fc.weight", 2)[1];
  const auto config_json = sibling_config(path);
  cfg.n_head = infer_n_head(c.file, config_json, cfg.d_model);
  if (config_json.contains("layer_norm_epsilon") && config_json["layer_norm_epsilon"].is_number())
    cfg.norm_eps = config_json["layer_norm_epsilon"].get<double>();

  auto expected = gpt2_expected_tensors(cfg);
  expected["lm_head.weight"] = {cfg.vocab, cfg.d_model};
  for (const auto& [canonical, name] : c.names)
    if (!expected.count(canonical) && !ignorable(canonical))
      fail_model_file(path, "unknown tensor '" + name + "' (not part of a GPT-2 checkpoint)");
  for (const auto& [canonical, shape] : expected) {
    auto it = c.names.find(canonical);
    if (it == c.names.end()) {
      if (canonical == "lm_head.weight") continue;  // tied to wte, usually not saved
      fail_model_file(path, "missing tensor '" + canonical + "'");
    }
    const auto& entry = c.file.tensors.at(it->second);
    if (entry.shape != shape)
      fail_model_file(path, "tensor '" + it->second + "' has shape " + shape_string(entry.shape) +
                                ", expected " + shape_string(shape));
    if (entry.dtype != "F32" && entry.dtype != "F16" && entry.dtype != "BF16")
      fail_model_file(path, "tensor '" + it->second + "' has dtype " + entry.dtype +
                                ", expected F32, F16 or BF16");
  }
  return c;
}

}  // namespace pg::lm
