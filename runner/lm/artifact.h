// Model artifacts named on the command line: `file:PATH.safetensors` (weights for the built-in
// GPT-2) and `aoti:PATH.pt2` (an AOTInductor package exported by the user's repository).
// LibTorch-free. docs/OWN_MODEL.md ("AOTInductor packages") is the contract.
//
// A relative PATH resolves against the checkout being measured (--repo), never the current
// directory: the base and head rounds of a gate each load their own commit's artifact. Every
// file is hashed (SHA-256) so that its identity is part of the run's fingerprint.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pg::lm {

inline constexpr std::string_view kAotiModelPrefix = "aoti:";
bool is_aoti_model(std::string_view model);

// `aoti:PATH` may hold `{batch}`, replaced by each cell's batch size (one package per batch
// size: a static KV cache fixes the batch at export).
inline constexpr std::string_view kBatchPlaceholder = "{batch}";

// What decides a package's speed besides the model's code (the sidecar's "export" object,
// python/perfgate_tuning.py; docs/OWN_MODEL_AOTI.md, "Exports that do not decide the verdict"):
// digests of the exported graph, of the generated kernels and of the tuning choices, and how many
// choices were tuned, replayed from another export, or tuned again although they were replayed.
struct ExportFacts {
  std::string graph_sha256, kernels_sha256, tuning_sha256;  // 64 hex digits each
  bool tuned_options = false;  // Inductor options that benchmark candidates (coordinate descent)
  int64_t tuned_kernels = 0, replayed_kernels = 0, retuned_kernels = 0;
  std::optional<std::string> replayed_from;  // SHA-256 of the choices file it was given
};

// What the exporter wrote beside the package (PATH.json, see docs/OWN_MODEL.md). Absent fields
// stay absent: the metrics that need them are then not reported, never guessed.
struct ModelFacts {
  std::optional<std::string> name;           // display name; the series key is "aoti:" + name
  std::optional<std::string> dtype;          // fp32 | fp16 | bf16: the package's, fixed at export
  std::optional<std::string> device;         // cpu | cuda
  std::optional<int64_t> batch_size;         // the batch the package was exported for
  std::optional<int64_t> context;            // longest prompt + generated tokens (the cache length)
  std::optional<int64_t> vocab;              // logits' last dimension
  std::optional<double> param_bytes;         // every parameter once, as exported
  std::optional<double> flops_per_token;     // forward FLOPs per token, attention excluded
  std::optional<double> kv_bytes_per_token;  // K and V of one position, all layers
  std::optional<std::string> weights_sha256;    // of the parameters, as the exporter hashed them
  std::optional<std::string> decode_program;    // a second program in the package, for T = 1
  std::map<std::string, std::string> exporter;  // e.g. torch, transformers versions
  std::optional<ExportFacts> export_facts;      // absent from exporters that do not record it
};

// An AOTInductor package loads only in the torch release (major.minor) that compiled it: its
// kernels call that release's C shim. Why a package `exported_by` (the sidecar's exporter.torch,
// e.g. "2.10.0") cannot run on LibTorch `runner` (e.g. "2.11.0+cu130"), naming both; nullopt when
// they are one release, or when `exported_by` is not a version at all (nothing to compare).
std::optional<std::string> torch_release_mismatch(const std::string& exported_by,
                                                  const std::string& runner);

// Reads and validates the sidecar; throws UsageError naming the file and the field.
ModelFacts read_model_facts(const std::string& sidecar_path);
std::string sidecar_path_of(const std::string& package_path);  // PATH.pt2 -> PATH.json

// One concrete file: where it is, what it hashes to, what its sidecar says.
struct ArtifactFile {
  std::string path;  // absolute
  std::string sha256;
  ModelFacts facts;  // empty for file: models
};

struct Artifact {
  std::string key;    // the CellKey.model of its cells (the series key)
  std::string typed;  // the --model value as given
  bool aoti = false;
  std::map<int, ArtifactFile> files;  // by batch size; a file: model has one entry under 0
  const ArtifactFile& file_for_batch(int batch) const;  // throws UsageError if not resolved
};

// Resolves `spec` (file: or aoti:) against `repo` for each batch size, hashes and checks every
// file, registers the artifact process-wide and returns its key: the spec itself for file:
// models, "aoti:" + the sidecar's name for packages (the path as typed when it has none).
// Throws SettingError naming `where` (the setting, marked, or file:line: key) for a missing or
// unreadable file.
std::string register_model_artifact(const std::string& spec, const std::string& repo,
                                    const std::vector<int>& batch_sizes, const std::string& where);

// The artifact registered under `key`, or nullptr (presets; file: specs used directly in tests).
const Artifact* find_artifact(const std::string& key);

// The file the cell loads: the registered file, else the spec's own path as given.
std::string artifact_path(const std::string& key, int batch);

// Fingerprint entries of every registered artifact: artifact_sha256 (every file), weights_sha256
// (file: weights; a comparability field), aoti_weights_sha256 (the sidecar's, recorded only),
// aoti_decode_program (recorded only), exporter_* versions, and of packages whose sidecar records
// its export: aoti_graph_sha256, aoti_kernels_sha256, aoti_tuning_sha256, aoti_tuned_kernels (with
// tuned options only), aoti_replayed_from, aoti_replayed_kernels and aoti_retuned_kernels (of a
// replayed export), each "LABEL=VALUE, ..." (recorded only; app/export_check.h reads them).
// Empty without artifacts.
std::map<std::string, std::string> artifact_environment();

// Hex SHA-256 of a file's bytes. Throws UsageError if it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace pg::lm
