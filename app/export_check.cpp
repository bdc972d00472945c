#include "app/export_check.h"

#include "common/errors.h"

namespace pg::app {

std::map<std::string, std::string> per_package(const Environment& env, const std::string& field) {
  std::map<std::string, std::string> out;
  auto it = env.find(field);
  if (it == env.end()) return out;
  const std::string& v = it->second;
  for (size_t start = 0; start < v.size();) {
    size_t end = v.find(", ", start);
    if (end == std::string::npos) end = v.size();
    const std::string entry = v.substr(start, end - start);
    if (const size_t eq = entry.rfind('='); eq != std::string::npos)
      out[entry.substr(0, eq)] = entry.substr(eq + 1);
    start = end + 2;
  }
  return out;
}

namespace {

std::string short_digest(const std::string& sha) { return sha.substr(0, 12); }

// One package's facts on one side, as its run recorded them.
struct Facts {
  std::string graph, kernels, tuning, replayed_from;
  bool tuned = false;
  std::string retuned = "0";
};

std::map<std::string, Facts> facts_of(const Environment& env) {
  std::map<std::string, Facts> out;
  for (const auto& [label, sha] : per_package(env, "aoti_graph_sha256")) out[label].graph = sha;
  for (const auto& [label, sha] : per_package(env, "aoti_kernels_sha256")) out[label].kernels = sha;
  for (const auto& [label, sha] : per_package(env, "aoti_tuning_sha256")) out[label].tuning = sha;
  for (const auto& [label, n] : per_package(env, "aoti_tuned_kernels")) out[label].tuned = true;
  for (const auto& [label, sha] : per_package(env, "aoti_replayed_from"))
    out[label].replayed_from = sha;
  for (const auto& [label, n] : per_package(env, "aoti_retuned_kernels")) out[label].retuned = n;
  return out;
}

// Why a tuned gate of this package could be decided by its export, or "" when it cannot.
std::string unreplayed_tuning(const Facts& base, const Facts& head) {
  if (!base.tuned && !head.tuned) return "";
  if (head.replayed_from.empty())
    return "was exported with tuned Inductor options, and the head's export replayed no recorded "
           "choices";
  if (head.replayed_from != base.tuning)
    return "was exported with tuned Inductor options, and the head's export replayed choices " +
           short_digest(head.replayed_from) + ", not the base's (" + short_digest(base.tuning) +
           ")";
  if (head.retuned != "0")
    return "was exported with tuned Inductor options, and the head's export tuned again " +
           head.retuned + " of the base's choices it was given";
  return "";
}

}  // namespace

ExportCheck check_exports(const Environment& base_env, const Environment& head_env,
                          bool allow_unreplayed_tuning) {
  ExportCheck check;
  const auto base = facts_of(base_env), head = facts_of(head_env);
  for (const auto& [label, h] : head) {
    auto b = base.find(label);
    if (b == base.end() || b->second.graph.empty() || h.graph.empty()) continue;
    if (b->second.graph == h.graph &&
        (b->second.kernels != h.kernels || b->second.tuning != h.tuning))
      check.warnings.push_back(
          "EXPORT ONLY: " + label +
          ": base and head export the same graph and weights, but their packages differ in " +
          (b->second.kernels != h.kernels ? "the kernels generated" : "the tuning choices") +
          ": what this gate measures of it is the export's doing, not the code's");
    if (const std::string why = unreplayed_tuning(b->second, h); !why.empty()) {
      check.refuse = check.refuse || !allow_unreplayed_tuning;
      check.warnings.push_back(
          std::string(allow_unreplayed_tuning
                          ? "UNREPLAYED TUNING (allowed by " +
                                SettingError::setting("allow_unreplayed_tuning") + "): "
                          : "UNREPLAYED TUNING: ") +
          label + " " + why + ", so two tuning results would decide the verdict; export the head " +
          "with the base's choices (its PATH.tuning.json, which the action hands to the head) or " +
          "with Inductor's defaults (docs/OWN_MODEL_AOTI.md)");
    }
  }
  return check;
}

}  // namespace pg::app
