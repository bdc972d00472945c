#include "runner/config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "core/model_name.h"
#include "remote/submit.h"
#include "runner/config_detail.h"
#include "runner/lm/artifact.h"
#include "runner/lm/measure.h"
#include "runner/lm/presets.h"
#include "store/atomic_file.h"

namespace fs = std::filesystem;

namespace pg::runner {
namespace detail {
namespace {
// Help and messages name the other settings they mention; the front end spells them
// (common/errors.h).
std::string setting(const char* name) { return SettingError::setting(name); }
}  // namespace

const std::vector<SettingDef>& setting_defs() {
  using K = ValueKind;
  static const std::vector<SettingDef> defs = {
      {{"model", "LIST",
        "model presets (tiny, gpt2..gpt2-xl, cs336-small..cs336-2.7b), file:PATH.safetensors or "
        "aoti:PATH.pt2 (relative paths resolve against " +
            setting("repo") + ")",
        "tiny"},
       K::string_list},
      {{"dtype", "LIST", "weight and activation dtypes: fp32,fp16,bf16",
        "fp32 on cpu, bf16 on cuda"},
       K::string_list},
      {{"batch-sizes", "LIST", "batch sizes to sweep", "1,4,8,16"}, K::int_list},
      {{"seq-lens", "LIST", "prompt lengths to sweep", "64,256,512"}, K::int_list},
      {{"gen-tokens", "N", "tokens generated per repetition (first token + N-1 decode steps)",
        "32"},
       K::int_scalar},
      {{"warmup", "N", "untimed repetitions before the timed ones", "3"}, K::int_scalar},
      {{"reps", "N", "timed repetitions per cell", "10"}, K::int_scalar},
      {{"device", "DEV", "cpu, cuda or cuda:N", "cuda if a GPU is present, else cpu"},
       K::string_scalar},
      {{"kv-cache", "LIST", "KV cache on,off (off recomputes the prefix every step)", "on"},
       K::onoff_list},
      {{"attention", "LIST", "attention kernels: sdpa,math",
        "sdpa where LibTorch has it, else math"},
       K::string_list},
      {{"cuda-graphs", "LIST", "CUDA graphs for decode: on,off", "off"}, K::onoff_list},
      {{"profile", "on|off",
        "after the timed repetitions, one untimed sequence per cell under the profiler", "on"},
       K::onoff_list},
      {{"seed", "N", "seed of the random weights and prompts", "0"}, K::int_scalar},
      {{"repo", "PATH", "git repository whose commit tags the run", "the current directory's"},
       K::string_scalar},
      {{"db", "FILE", "SQLite database the run is stored in", "perfgate.db"}, K::string_scalar},
      {{"csv", "FILE", "also write the run as CSV to FILE", ""}, K::string_scalar},
      {{"json", "FILE", "also write the run as export JSON to FILE", ""}, K::string_scalar},
      {{"submit", "URL", "also POST the run to a perfgate server at URL (+ /api/v1/runs)", ""},
       K::string_scalar},
      {{"token-file", "FILE", "bearer token for " + setting("submit"), ""}, K::string_scalar},
      {{"quiet", "", "no progress and no table", ""}, K::flag},
      {{"peak-bw-gbps", "GBPS", "device peak memory bandwidth for MBU", "known-GPU table"},
       K::number},
      {{"peak-tflops", "TFLOPS", "device peak FLOP/s (in the run's dtype) for MFU",
        "known-GPU table"},
       K::number},
      {{"exec", "CMD",
        "measure every cell with your own benchmark: CMD runs in " + setting("repo") +
            " through /bin/sh -c and prints docs/PROTOCOL.md's JSON lines; " + setting("model") +
            " then names your model(s)",
        ""},
       K::string_scalar},
      {{"exec-timeout", "SECONDS",
        "limit on one cell's " + setting("exec") + " command; then it is killed", "900"},
       K::number},
  };
  return defs;
}

const SettingDef* find_def(const std::string& name) {
  for (const auto& d : setting_defs())
    if (d.info.name == name) return &d;
  return nullptr;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// A command-line value in the raw form; list settings split on commas.
RawSetting raw_from_command_line(const std::string& name, const std::string& text) {
  RawSetting raw;
  raw.where = SettingError::setting(name);
  const ValueKind kind = kind_of(name);
  const bool list = kind == ValueKind::int_list || kind == ValueKind::string_list ||
                    kind == ValueKind::onoff_list;
  if (!list) {
    raw.items.push_back({text, raw.where});
    return raw;
  }
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) raw.items.push_back({trim(item), raw.where});
  if (!text.empty() && text.back() == ',') raw.items.push_back({"", raw.where});
  if (raw.items.empty()) raw.items.push_back({"", raw.where});
  return raw;
}

[[noreturn]] void bad(const RawItem& item, const std::string& why) {
  throw SettingError(fmt::format("{}: '{}' {}", item.where, item.text, why));
}

namespace {

int64_t parse_integer(const RawItem& item, int64_t min, int64_t max, const char* what) {
  int64_t v = 0;
  const char* b = item.text.data();
  const char* e = b + item.text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (item.text.empty() || ec != std::errc() || p != e || v < min || v > max)
    bad(item, fmt::format("is not {}", what));
  return v;
}

int parse_positive(const RawItem& item) {
  return static_cast<int>(
      parse_integer(item, 1, std::numeric_limits<int>::max(), "a positive integer"));
}

// > 0 and at most `max` (a limit that would overflow a clock when converted). "is not a positive
// number" for the rest.
double parse_positive_number(const RawItem& item, double max) {
  double v = 0;
  const char* b = item.text.data();
  const char* e = b + item.text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (item.text.empty() || ec != std::errc() || p != e || !std::isfinite(v) || v <= 0)
    bad(item, "is not a positive number");
  if (v > max) bad(item, fmt::format("is larger than {:g}", max));
  return v;
}

// A device peak within [min, max]: outside it no real device, and derived ratios (MFU, MBU) would
// overflow to inf and be refused only after the run row is stored.
double parse_peak(const RawItem& item, double min, double max) {
  double v = 0;
  const char* b = item.text.data();
  const char* e = b + item.text.size();
  auto [p, ec] = std::from_chars(b, e, v);
  if (item.text.empty() || ec != std::errc() || p != e || !std::isfinite(v) || v < min || v > max)
    bad(item, fmt::format("is not a number from {:g} to {:g}", min, max));
  return v;
}

std::string parse_choice(const RawItem& item, const std::vector<std::string>& choices) {
  for (const auto& c : choices)
    if (item.text == c) return c;
  bad(item, fmt::format("is not one of {}", fmt::join(choices, ", ")));
}

bool parse_onoff(const RawItem& item) {
  if (item.text == "on") return true;
  if (item.text == "off") return false;
  bad(item, "is not on or off");
}

void reject_duplicates(const RawSetting& raw) {
  std::set<std::string> seen;
  for (const auto& item : raw.items)
    if (!seen.insert(item.text).second) bad(item, "is listed twice");
}

template <typename T, typename F>
std::vector<T> parse_list(const RawSetting& raw, F parse_one) {
  reject_duplicates(raw);
  std::vector<T> out;
  for (const auto& item : raw.items) out.push_back(parse_one(item));
  return out;
}

// Artifacts (file:, aoti:) are only checked for form here: they resolve against --repo, which
// may come later, in resolve_model_artifacts.
std::string parse_model(const RawItem& item) {
  if (lm::is_file_model(item.text) || lm::is_aoti_model(item.text)) return item.text;
  if (lm::find_preset(item.text)) return item.text;
  bad(item, fmt::format("is not a model preset ({}), file:PATH.safetensors or aoti:PATH.pt2",
                        fmt::join(lm::preset_names(), ", ")));
}

// With --exec a model is the user's name for it: the series key, stable across commits, so a
// name and not a path; presets and `kind:` specs are refused so the two kinds never share a key.
std::string parse_exec_model(const RawItem& item) {
  if (!is_model_name(item.text))
    bad(item, fmt::format("is not a model name for {} ({}; not a path)", setting("exec"),
                          kModelNameRule));
  if (lm::find_preset(item.text))
    bad(item, "is one of perfgate's own model presets; give your model a name of its own");
  return item.text;
}

// Every file: and aoti: model, resolved against the checkout being measured and hashed; the
// model list then holds their series keys (an aoti: package's is its sidecar's name).
void resolve_model_artifacts(SweepConfig& cfg, const RawSetting* models) {
  for (auto& model : cfg.models) {
    if (!lm::is_file_model(model) && !lm::is_aoti_model(model)) continue;
    std::string where = models ? models->where : setting("model");
    if (models)
      for (const auto& item : models->items)
        if (item.text == model) where = item.where;
    model = lm::register_model_artifact(model, cfg.repo, cfg.batch_sizes, where);
  }
}

std::string parse_device(const RawItem& item) {
  const std::string& t = item.text;
  if (t == "cpu") return t;
  if (t != "cuda" && !t.starts_with("cuda:")) bad(item, "is not cpu, cuda or cuda:N");
  if (t.starts_with("cuda:"))
    parse_integer({t.substr(5), item.where}, 0, 1023, "a CUDA device index");
  if (!lm::cuda_available())
    bad(item, "asks for a GPU, but this machine has no usable CUDA device (use " +
                  setting("device") + " cpu)");
  return t;
}

// A file the run will write at the end must be writable up front, not after an hour of sweep.
std::string parse_output_path(const RawItem& item) {
  if (item.text.empty()) bad(item, "is empty");
  std::error_code ec;
  const fs::path p(item.text);
  if (fs::is_directory(p, ec)) bad(item, "is a directory");
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) bad(item, "is in a directory that does not exist");
  if (::access(parent.c_str(), W_OK) != 0 && !fs::exists(p, ec))
    bad(item, "is in a directory that is not writable");
  return item.text;
}

// --csv/--json are replaced atomically at the end (store/atomic_file.h): refuse now what that
// would refuse then (a device node, a FIFO, a symlink to a directory).
std::string parse_export_path(const RawItem& item) {
  parse_output_path(item);
  store::resolve_output_target(item.text, item.where);
  return item.text;
}

const RawItem& single(const RawSetting& raw) { return raw.items.front(); }

}  // namespace

bool is_setting(const std::string& name) { return find_def(name) != nullptr; }

ValueKind kind_of(const std::string& setting) {
  const SettingDef* d = find_def(setting);
  if (!d) throw std::logic_error("unknown setting " + setting);
  return d->kind;
}

SweepConfig validate_settings(const RawSettings& s) {
  SweepConfig cfg;
  auto get = [&](const char* name) -> const RawSetting* {
    auto it = s.find(name);
    return it == s.end() ? nullptr : &it->second;
  };
  if (auto r = get("exec")) {
    if (single(*r).text.find_first_not_of(" \t") == std::string::npos) bad(single(*r), "is empty");
    cfg.exec = single(*r).text;
    if (!get("model"))
      throw SettingError(r->where + ": needs " + setting("model") +
                         " NAME, your model's name (it keys the series)");
  }
  if (auto r = get("exec-timeout")) {
    if (cfg.exec.empty())
      throw SettingError(single(*r).where + ": only makes sense with " + setting("exec"));
    cfg.exec_timeout_s = parse_positive_number(single(*r), 1e6);  // 11.6 days
  }
  if (auto r = get("model"))
    cfg.models = parse_list<std::string>(*r, cfg.exec.empty() ? parse_model : parse_exec_model);
  if (auto r = get("device")) cfg.device = parse_device(single(*r));
  if (cfg.device.empty()) cfg.device = lm::cuda_available() ? "cuda" : "cpu";
  const bool on_cuda = cfg.device != "cpu";
  if (auto r = get("dtype"))
    cfg.dtypes = parse_list<std::string>(*r, [](const RawItem& i) {
      return parse_choice(i, {"fp32", "fp16", "bf16"});
    });
  if (cfg.dtypes.empty()) cfg.dtypes = {on_cuda ? "bf16" : "fp32"};
  if (auto r = get("batch-sizes")) cfg.batch_sizes = parse_list<int>(*r, parse_positive);
  if (auto r = get("seq-lens")) cfg.seq_lens = parse_list<int>(*r, parse_positive);
  if (auto r = get("gen-tokens")) {
    cfg.gen_tokens = parse_positive(single(*r));
    if (cfg.gen_tokens < 2)
      bad(single(*r), "is too small: a repetition needs at least one decode step (minimum 2)");
  }
  if (auto r = get("warmup"))
    cfg.warmup = static_cast<int>(
        parse_integer(single(*r), 0, std::numeric_limits<int>::max(), "a non-negative integer"));
  if (auto r = get("reps")) cfg.reps = parse_positive(single(*r));
  if (auto r = get("kv-cache")) cfg.kv_cache = parse_list<bool>(*r, parse_onoff);
  if (auto r = get("attention"))
    cfg.attention = parse_list<std::string>(*r, [](const RawItem& i) {
      return parse_choice(i, {"sdpa", "math"});
    });
  if (cfg.attention.empty()) cfg.attention = {lm::default_attention()};
  if (auto r = get("cuda-graphs")) cfg.cuda_graphs = parse_list<bool>(*r, parse_onoff);
  if (auto r = get("profile")) {
    if (r->items.size() != 1)
      bad(r->items.back(), "is one value too many (profile takes one: on or off)");
    cfg.profile = parse_onoff(single(*r));
  }
  if (auto r = get("seed"))
    cfg.seed =
        parse_integer(single(*r), 0, std::numeric_limits<int64_t>::max(), "a non-negative integer");
  if (auto r = get("repo")) {
    std::error_code ec;
    if (!fs::is_directory(single(*r).text, ec)) bad(single(*r), "is not a directory");
    cfg.repo = single(*r).text;
  }
  if (auto r = get("db")) cfg.db = parse_output_path(single(*r));
  if (auto r = get("csv")) cfg.csv = parse_export_path(single(*r));
  if (auto r = get("json")) cfg.json = parse_export_path(single(*r));
  if (auto r = get("submit")) {
    remote::parse_submit_url(single(*r).text, single(*r).where);
    cfg.submit_url = single(*r).text;
  }
  if (auto r = get("token-file")) {
    if (cfg.submit_url.empty())
      throw SettingError(single(*r).where + ": only makes sense with " + setting("submit"));
    read_token_file(single(*r).text, single(*r).where);
    cfg.token_file = single(*r).text;
  } else if (!cfg.submit_url.empty()) {
    throw SettingError(get("submit")->where + ": needs " + setting("token-file") +
                       " with the server's token");
  }
  if (auto r = get("quiet")) cfg.quiet = single(*r).text == "true";
  if (auto r = get("peak-bw-gbps")) cfg.peak_bw_gbps = parse_peak(single(*r), 0.001, 1e7);
  if (auto r = get("peak-tflops")) cfg.peak_tflops = parse_peak(single(*r), 0.001, 1e7);
  resolve_model_artifacts(cfg, get("model"));
  for (const auto& [name, raw] : s)
    if (!raw.location.empty()) cfg.given_in_file[name] = raw.location;

  // Every prompt plus its generated tokens must fit the context of every preset model.
  const int max_seq = *std::max_element(cfg.seq_lens.begin(), cfg.seq_lens.end());
  for (const auto& model : cfg.models) {
    const auto preset = lm::find_preset(model);
    if (!preset || max_seq + cfg.gen_tokens <= preset->context) continue;
    const RawSetting* seq = get("seq-lens");
    throw SettingError(fmt::format(
        "{}: prompt length {} + gen-tokens {} = {} exceeds the context length {} of model '{}'",
        seq ? seq->where : setting("seq-lens"), max_seq, cfg.gen_tokens, max_seq + cfg.gen_tokens,
        preset->context, model));
  }
  return cfg;
}

}  // namespace detail
}  // namespace pg::runner
