#include "runner/lm/artifact.h"

#include <mbedtls/sha256.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "common/errors.h"
#include "common/inert_text.h"
#include "core/model_name.h"
#include "runner/lm/presets.h"

namespace pg::lm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Artifact>& registry() {
  static std::map<std::string, Artifact> r;
  return r;
}

std::string replace_all(std::string s, std::string_view from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

template <typename T>
std::optional<T> optional_field(const json& j, const char* field, const std::string& file) {
  auto it = j.find(field);
  if (it == j.end() || it->is_null()) return std::nullopt;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw UsageError("model sidecar '" + file + "': field '" + field + "' has the wrong type (" +
                     it->dump() + ")");
  }
}

template <typename T>
std::optional<T> positive_field(const json& j, const char* field, const std::string& file) {
  auto v = optional_field<T>(j, field, file);
  if (v && !(*v > 0))
    throw UsageError("model sidecar '" + file + "': field '" + field + "' must be positive");
  return v;
}

bool is_sha256(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The sidecar's "export" object: written by measured code, so every digest must be one and every
// count a count, or the sidecar is refused naming the field.
std::optional<ExportFacts> read_export_facts(const json& j, const std::string& file) {
  auto it = j.find("export");
  if (it == j.end() || it->is_null()) return std::nullopt;
  const std::string where = "model sidecar '" + file + "': field 'export.";
  if (!it->is_object()) throw UsageError(where.substr(0, where.size() - 1) + "' is not an object");
  ExportFacts e;
  auto digest = [&](const char* field) {
    auto v = optional_field<std::string>(*it, field, file);
    if (v && !is_sha256(*v))
      throw UsageError(where + field + "' is not a SHA-256 (64 lowercase hex digits)");
    return v;
  };
  auto count = [&](const char* field) {
    auto v = optional_field<int64_t>(*it, field, file).value_or(0);
    if (v < 0) throw UsageError(where + field + "' must not be negative");
    return v;
  };
  e.graph_sha256 = digest("graph_sha256").value_or("");
  e.kernels_sha256 = digest("kernels_sha256").value_or("");
  e.tuning_sha256 = digest("tuning_sha256").value_or("");
  e.replayed_from = digest("replayed_from");
  e.tuned_options = optional_field<bool>(*it, "tuned_options", file).value_or(false);
  e.tuned_kernels = count("tuned_kernels");
  e.replayed_kernels = count("replayed_kernels");
  e.retuned_kernels = count("retuned_kernels");
  return e;
}

}  // namespace

bool is_aoti_model(std::string_view model) { return model.starts_with(kAotiModelPrefix); }

namespace {
// "2.11" of "2.11.0+cu130", or nullopt for what does not start with MAJOR.MINOR.
std::optional<std::string> major_minor(const std::string& v) {
  size_t i = 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    return i > from;
  };
  if (!digits() || i >= v.size() || v[i] != '.') return std::nullopt;
  ++i;
  if (!digits()) return std::nullopt;
  return v.substr(0, i);
}
}  // namespace

std::optional<std::string> torch_release_mismatch(const std::string& exported_by,
                                                  const std::string& runner) {
  const auto package = major_minor(exported_by), ours = major_minor(runner);
  if (!package || !ours || *package == *ours) return std::nullopt;
  return "it was exported by torch " + exported_by + " and this perfgate runs LibTorch " + runner +
         ": a package loads only in the torch release that compiled it (" + *package + " is not " +
         *ours + "); export it again with torch " + *ours + ", or run it with a perfgate built " +
         "against torch " + *package;
}

std::string sidecar_path_of(const std::string& package_path) {
  fs::path p(package_path);
  return p.replace_extension(".json").string();
}

ModelFacts read_model_facts(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("model sidecar '" + file + "' cannot be read");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw UsageError("model sidecar '" + file + "' is not JSON: " + e.what());
  }
  if (!j.is_object()) throw UsageError("model sidecar '" + file + "' is not a JSON object");
  ModelFacts f;
  f.name = optional_field<std::string>(j, "name", file);
  // The series key, written by the code being measured: the --exec names' rule, and the refused
  // value shown inert.
  if (f.name && !is_model_name(*f.name))
    throw UsageError("model sidecar '" + file + "': field 'name' ('" + inert_text(*f.name, 80) +
                     "') is not a model name (" + std::string(kModelNameRule) + ")");
  f.dtype = optional_field<std::string>(j, "dtype", file);
  if (f.dtype && *f.dtype != "fp32" && *f.dtype != "fp16" && *f.dtype != "bf16")
    throw UsageError("model sidecar '" + file + "': dtype '" + *f.dtype +
                     "' is not fp32, fp16 or bf16");
  f.device = optional_field<std::string>(j, "device", file);
  f.batch_size = positive_field<int64_t>(j, "batch_size", file);
  f.context = positive_field<int64_t>(j, "context", file);
  f.vocab = positive_field<int64_t>(j, "vocab", file);
  f.param_bytes = positive_field<double>(j, "param_bytes", file);
  f.flops_per_token = positive_field<double>(j, "flops_per_token", file);
  f.kv_bytes_per_token = positive_field<double>(j, "kv_bytes_per_token", file);
  f.weights_sha256 = optional_field<std::string>(j, "weights_sha256", file);
  f.decode_program = optional_field<std::string>(j, "decode_program", file);
  if (f.decode_program && f.decode_program->empty())
    throw UsageError("model sidecar '" + file + "': field 'decode_program' is empty");
  if (auto e = j.find("exporter"); e != j.end() && e->is_object())
    for (const auto& [k, v] : e->items())
      if (v.is_string()) f.exporter[k] = v.get<std::string>();
  f.export_facts = read_export_facts(j, file);
  return f;
}

std::string sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read '" + path + "' to hash it");
  mbedtls_sha256_context ctx;
  mbedtls_sha256_init(&ctx);
  mbedtls_sha256_starts_ret(&ctx, 0);
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0)
      mbedtls_sha256_update_ret(&ctx, reinterpret_cast<const unsigned char*>(buf.data()),
                                static_cast<size_t>(in.gcount()));
  }
  const bool read_error = in.bad();
  std::array<unsigned char, 32> digest{};
  mbedtls_sha256_finish_ret(&ctx, digest.data());
  mbedtls_sha256_free(&ctx);
  if (read_error) throw UsageError("cannot read '" + path + "' to hash it");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : digest) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

const ArtifactFile& Artifact::file_for_batch(int batch) const {
  auto it = files.find(aoti ? batch : 0);
  if (it == files.end())
    throw UsageError("model '" + typed + "': no package resolved for batch size " +
                     std::to_string(batch));
  return it->second;
}

std::string register_model_artifact(const std::string& spec, const std::string& repo,
                                    const std::vector<int>& batch_sizes, const std::string& where) {
  Artifact a;
  a.typed = spec;
  a.aoti = is_aoti_model(spec);
  const std::string typed_path =
      a.aoti ? spec.substr(kAotiModelPrefix.size()) : file_model_path(spec);
  if (typed_path.empty())
    throw SettingError(where + ": '" + spec + "' names no file (expected " +
                       (a.aoti ? "aoti:PATH.pt2" : "file:PATH.safetensors") + ")");
  const bool per_batch = typed_path.find(kBatchPlaceholder) != std::string::npos;
  if (per_batch && !a.aoti)
    throw SettingError(where + ": '" + spec + "': {batch} is only for aoti: packages");
  std::vector<int> batches = a.aoti ? batch_sizes : std::vector<int>{0};
  if (a.aoti && !per_batch) batches = {batch_sizes.begin(), batch_sizes.end()};
  std::string first_name;
  for (int b : batches) {
    std::string p =
        per_batch ? replace_all(typed_path, kBatchPlaceholder, std::to_string(b)) : typed_path;
    fs::path path(p);
    if (path.is_relative()) path = fs::absolute(fs::path(repo) / path);
    path = path.lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      throw SettingError(where + ": '" + spec + "' names a file that does not exist (" +
                         path.string() + "; relative paths resolve against " +
                         SettingError::setting("repo") + " " + repo + ")");
    ArtifactFile f;
    f.path = path.string();
    f.sha256 = sha256_file(f.path);
    if (a.aoti) {
      const std::string sidecar = sidecar_path_of(f.path);
      if (fs::exists(sidecar, ec)) f.facts = read_model_facts(sidecar);
      if (f.facts.batch_size && *f.facts.batch_size != b)
        throw SettingError(where + ": '" + spec + "': " + f.path + " was exported for batch size " +
                           std::to_string(*f.facts.batch_size) + ", not " + std::to_string(b) +
                           " (export one package per batch size and name them with {batch})");
      const std::string name = f.facts.name.value_or(typed_path);
      if (!first_name.empty() && name != first_name)
        throw SettingError(where + ": '" + spec + "': the packages name different models ('" +
                           first_name + "' and '" + name + "')");
      first_name = name;
    }
    a.files[b] = std::move(f);
  }
  a.key = a.aoti ? std::string(kAotiModelPrefix) + first_name : spec;
  std::lock_guard lock(registry_mutex());
  auto [it, inserted] = registry().try_emplace(a.key, a);
  if (!inserted) {
    if (it->second.typed != a.typed)
      throw SettingError(where + ": '" + spec + "' and '" + it->second.typed +
                         "' both name the model '" + a.key + "'");
    it->second = a;  // re-resolved (a later config in the same process)
  }
  return a.key;
}

const Artifact* find_artifact(const std::string& key) {
  std::lock_guard lock(registry_mutex());
  auto it = registry().find(key);
  return it == registry().end() ? nullptr : &it->second;
}

std::string artifact_path(const std::string& key, int batch) {
  if (const Artifact* a = find_artifact(key)) return a->file_for_batch(batch).path;
  if (is_aoti_model(key)) return key.substr(kAotiModelPrefix.size());
  return file_model_path(key);
}

std::map<std::string, std::string> artifact_environment() {
  std::lock_guard lock(registry_mutex());
  std::map<std::string, std::string> env;
  auto append = [&](const std::string& field, const std::string& entry) {
    std::string& v = env[field];
    v += (v.empty() ? "" : ", ") + entry;
  };
  std::map<std::string, std::set<std::string>> exporter;
  for (const auto& [key, a] : registry()) {
    for (const auto& [batch, f] : a.files) {
      const std::string label = a.aoti ? key + " b" + std::to_string(batch) : key;
      append("artifact_sha256", label + "=" + f.sha256);
      // file: weights feed perfgate's own fixed code: other weights are another model, so
      // weights_sha256 is a comparability field. A package's weights may change with the
      // code under test (an extra layer), which the gate must judge: recorded, not compared.
      if (!a.aoti) append("weights_sha256", label + "=" + f.sha256);
      if (f.facts.weights_sha256)
        append("aoti_weights_sha256", label + "=" + *f.facts.weights_sha256);
      if (f.facts.decode_program)
        append("aoti_decode_program", label + "=" + *f.facts.decode_program);
      for (const auto& [tool, version] : f.facts.exporter) exporter[tool].insert(version);
      if (const auto& e = f.facts.export_facts) {
        append("aoti_graph_sha256", label + "=" + e->graph_sha256);
        append("aoti_kernels_sha256", label + "=" + e->kernels_sha256);
        append("aoti_tuning_sha256", label + "=" + e->tuning_sha256);
        if (e->tuned_options)
          append("aoti_tuned_kernels", label + "=" + std::to_string(e->tuned_kernels));
        if (e->replayed_from) {
          append("aoti_replayed_from", label + "=" + *e->replayed_from);
          append("aoti_replayed_kernels", label + "=" + std::to_string(e->replayed_kernels));
          append("aoti_retuned_kernels", label + "=" + std::to_string(e->retuned_kernels));
        }
      }
    }
  }
  for (const auto& [tool, versions] : exporter)
    for (const auto& v : versions) append("exporter_" + tool, v);
  return env;
}

}  // namespace pg::lm
