#include "app/gate_record.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"

namespace pg::app {
namespace {

[[noreturn]] void bad(const std::string& context, const std::string& key, const std::string& what) {
  throw UsageError(context + ": '" + key + "' " + what);
}

const nlohmann::json& field(const nlohmann::json& j, const std::string& context,
                            const std::string& key) {
  if (!j.contains(key)) bad(context, key, "is required");
  return j[key];
}

std::string sha(const nlohmann::json& gate, const std::string& context, const std::string& key) {
  const auto& v = field(gate, context, key);
  std::string s = v.is_string() ? v.get<std::string>() : "";
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s.size() != 40 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; }))
    bad(context, key, "must be a full 40-digit commit SHA");
  return s;
}

// A finite number > 0 and <= 1 (a level or a power), or >= 0 (an effect size).
void check_level(const nlohmann::json& gate, const std::string& context, const std::string& key) {
  const auto& v = field(gate, context, key);
  const double d = v.is_number() ? v.get<double>() : NAN;
  if (!(d > 0 && d <= 1)) bad(context, key, "must be a number in (0, 1]");
}

void check_effect(const nlohmann::json& gate, const std::string& context, const std::string& key) {
  const auto& v = field(gate, context, key);
  const double d = v.is_number() ? v.get<double>() : NAN;
  if (!std::isfinite(d) || d < 0) bad(context, key, "must be a finite number >= 0");
}

// A short text field: a string without control characters, at most `max` bytes.
std::string text(const nlohmann::json& v, const std::string& context, const std::string& key,
                 size_t max) {
  if (!v.is_string()) bad(context, key, "must be a string");
  std::string s = v.get<std::string>();
  check_gate_label(s, context + ": '" + key + "'", max);
  return s;
}

void check_cells(const nlohmann::json& gate, const std::string& context) {
  const auto& cells = field(gate, context, "cells");
  if (!cells.is_array()) bad(context, "cells", "must be an array");
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string where = context + ": cells/" + std::to_string(i);
    const auto& c = cells[i];
    if (!c.is_object()) throw UsageError(where + " must be an object");
    cell_key_from_json(field(c, where, "key"), where + "/key");
    if (!field(c, where, "verdict").is_string()) bad(where, "verdict", "must be a string");
    const auto& r = field(c, where, "ratio");
    if (!r.is_null() && !(r.is_number() && r.get<double>() > 0))
      bad(where, "ratio", "must be a positive number or null");
  }
}

}  // namespace

void check_gate_label(const std::string& value, const std::string& name, size_t max) {
  if (value.size() > max)
    throw UsageError(name + " is longer than " + std::to_string(max) + " bytes");
  for (unsigned char c : value)
    if (c < 0x20 || c == 0x7f) throw UsageError(name + " contains control characters");
}

nlohmann::json gate_settings_json(const nlohmann::json& gate) {
  nlohmann::json s = nlohmann::json::object();
  for (const char* k : {"alpha", "min_effect", "min_effect_source", "correction", "power",
                        "require_power", "metrics"})
    if (gate.contains(k)) s[k] = gate[k];
  if (gate.contains("sequential") && gate["sequential"].is_object())
    for (const char* k : {"look", "max_looks", "alpha_per_look"})
      if (gate["sequential"].contains(k)) s[k] = gate["sequential"][k];
  return s;
}

store::Store::GateRecord gate_record_from_json(nlohmann::json gate, const std::string& context,
                                               const std::string& source, std::string ref,
                                               std::string submitted_by) {
  if (!gate.is_object())
    throw UsageError(context + ": a JSON object (the compare JSON) is required");
  if (ref.empty() && gate.contains("ref")) ref = text(gate["ref"], context, "ref", kMaxGateRef);
  if (submitted_by.empty() && gate.contains("submitted_by"))
    submitted_by = text(gate["submitted_by"], context, "submitted_by", kMaxGateSubmitter);
  check_gate_label(ref, context + ": ref", kMaxGateRef);
  check_gate_label(submitted_by, context + ": submitted_by", kMaxGateSubmitter);
  gate.erase("ref");
  gate.erase("submitted_by");
  if (submitted_by.empty()) bad(context, "submitted_by", "is required (who submits this gate)");
  store::Store::GateRecord r;
  r.base = sha(gate, context, "base");
  r.head = sha(gate, context, "head");
  gate["base"] = r.base;
  gate["head"] = r.head;
  const auto& verdict = field(gate, context, "verdict");
  r.verdict = verdict.is_string() ? verdict.get<std::string>() : "";
  if (r.verdict == "pass") {
    r.exit_code = 0;
  } else if (r.verdict == "regression") {
    r.exit_code = 1;
  } else if (r.verdict == "inconclusive") {
    r.exit_code = 3;
  } else {
    bad(context, "verdict", "must be pass, regression or inconclusive");
  }
  check_level(gate, context, "alpha");
  check_effect(gate, context, "min_effect");
  text(field(gate, context, "correction"), context, "correction", 16);
  if (gate.contains("power")) check_level(gate, context, "power");
  check_cells(gate, context);
  r.ref = ref;
  r.submitted_by = submitted_by;
  r.source = source;
  r.settings = gate_settings_json(gate).dump();
  r.result = gate.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

std::optional<WorstCell> worst_regressed_cell(const nlohmann::json& result) {
  std::optional<WorstCell> worst;
  if (!result.contains("cells") || !result["cells"].is_array()) return worst;
  for (const auto& c : result["cells"]) {
    if (!c.is_object() || c.value("verdict", "") != "regression") continue;
    if (!c.contains("ratio") || !c["ratio"].is_number()) continue;
    const double rel = c["ratio"].get<double>() - 1.0;
    if (worst && worst->relative >= rel) continue;
    std::string label;
    try {
      const CellKey k = cell_key_from_json(c["key"], "/key");
      label = k.model + " · " + cell_label(k, false);
      if (const std::string m = c.value("metric", "tpot_ms"); m != "tpot_ms") label += " · " + m;
    } catch (const UsageError&) {
      label = "(a cell)";
    }
    worst = WorstCell{rel, label};
  }
  return worst;
}

}  // namespace pg::app
