#include "store/run_json.h"

#include <cmath>

#include "common/errors.h"
#include "common/utf8.h"
#include "core/cell_key_io.h"
#include "core/environment_json.h"
#include "store/profile_json.h"
#include "store/validate.h"

namespace pg::store {
namespace {

using nlohmann::json;

json opt_str(const std::optional<std::string>& v) { return v ? json(valid_utf8(*v)) : json(); }

// ---- parsing, with a JSON-pointer path in every message

struct Parser {
  std::string source;

  [[noreturn]] void bad(const std::string& ptr, const std::string& what) const {
    throw UsageError(source + ": " + (ptr.empty() ? "/" : ptr) + ": " + what);
  }
  const json& object(const json& j, const std::string& ptr) const {
    if (!j.is_object()) bad(ptr, std::string("expected an object, got ") + j.type_name());
    return j;
  }
  const json& array(const json& j, const std::string& ptr) const {
    if (!j.is_array()) bad(ptr, std::string("expected an array, got ") + j.type_name());
    return j;
  }
  const json& field(const json& obj, const char* key, const std::string& ptr) const {
    auto it = obj.find(key);
    if (it == obj.end()) bad(ptr + "/" + key, "required field is missing");
    return *it;
  }
  const json* optional_field(const json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  std::string str(const json& j, const std::string& ptr) const {
    if (!j.is_string()) bad(ptr, std::string("expected a string, got ") + j.type_name());
    return j.get<std::string>();
  }
  std::optional<std::string> str_or_null(const json* j, const std::string& ptr) const {
    if (!j || j->is_null()) return std::nullopt;
    return str(*j, ptr);
  }
  bool boolean(const json& j, const std::string& ptr) const {
    if (!j.is_boolean()) bad(ptr, std::string("expected true or false, got ") + j.type_name());
    return j.get<bool>();
  }
  double number(const json& j, const std::string& ptr) const {
    if (!j.is_number()) bad(ptr, std::string("expected a number, got ") + j.type_name());
    const double v = j.get<double>();
    if (!std::isfinite(v)) bad(ptr, "expected a finite number");
    return v;
  }
  std::vector<double> numbers(const json& j, const std::string& ptr) const {
    array(j, ptr);
    std::vector<double> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i)
      out.push_back(number(j[i], ptr + "/" + std::to_string(i)));
    return out;
  }

  CellKey key(const json& j, const std::string& ptr) const {
    try {
      return cell_key_from_json(j, ptr);
    } catch (const UsageError& e) {
      throw UsageError(source + ": " + e.what());
    }
  }

  CellResult cell(const json& j, const std::string& ptr) const {
    object(j, ptr);
    CellResult c;
    c.key = key(field(j, "key", ptr), ptr + "/key");
    const std::string status = str(field(j, "status", ptr), ptr + "/status");
    try {
      c.status = cell_status_from_string(status);
    } catch (const UsageError& e) {
      bad(ptr + "/status", e.what());
    }
    c.reason = str_or_null(optional_field(j, "reason"), ptr + "/reason");
    if (const json* m = optional_field(j, "metrics"); m && !m->is_null()) {
      object(*m, ptr + "/metrics");
      for (const auto& [name, value] : m->items())
        c.metrics[name] = number(value, ptr + "/metrics/" + name);
    }
    if (const json* s = optional_field(j, "samples"); s && !s->is_null()) {
      const std::string sp = ptr + "/samples";
      object(*s, sp);
      c.samples.prefill_ms = numbers(field(*s, "prefill_ms", sp), sp + "/prefill_ms");
      const json& decode = array(field(*s, "decode_ms", sp), sp + "/decode_ms");
      for (size_t r = 0; r < decode.size(); ++r)
        c.samples.decode_ms.push_back(numbers(decode[r], sp + "/decode_ms/" + std::to_string(r)));
      if (const json* pos = optional_field(*s, "ab_position"); pos && !pos->is_null()) {
        const std::string pp = sp + "/ab_position";
        array(*pos, pp);
        for (size_t r = 0; r < pos->size(); ++r) {
          const json& v = (*pos)[r];
          if (!v.is_number_integer()) bad(pp + "/" + std::to_string(r), "expected 0 or 1");
          c.samples.ab_position.push_back(v.get<int>());
        }
      }
    }
    if (const json* p = optional_field(j, "profile"); p && !p->is_null())
      c.profile = profile_from_json(*p, source + ": " + ptr + "/profile");
    return c;
  }

  Run run(const json& j, const std::string& ptr) const {
    object(j, ptr);
    Run r;
    const std::string status = str(field(j, "status", ptr), ptr + "/status");
    try {
      r.status = run_status_from_string(status);
    } catch (const UsageError& e) {
      bad(ptr + "/status", e.what());
    }
    r.started_at = str_or_null(optional_field(j, "started_at"), ptr + "/started_at").value_or("");
    r.finished_at =
        str_or_null(optional_field(j, "finished_at"), ptr + "/finished_at").value_or("");
    r.uuid = str_or_null(optional_field(j, "uuid"), ptr + "/uuid").value_or("");
    if (!r.uuid.empty() && !is_run_uuid(r.uuid))
      bad(ptr + "/uuid", "'" + r.uuid + "' is not 32 hex digits or null");

    if (const json* ab = optional_field(j, "ab"); ab && !ab->is_null()) {
      const std::string ap = ptr + "/ab";
      object(*ab, ap);
      AbPairing pairing;
      pairing.uuid = str(field(*ab, "uuid", ap), ap + "/uuid");
      pairing.side = str(field(*ab, "side", ap), ap + "/side");
      pairing.design = str(field(*ab, "design", ap), ap + "/design");
      const json& seed = field(*ab, "seed", ap);
      if (!seed.is_number_unsigned()) bad(ap + "/seed", "expected an integer >= 0");
      pairing.seed = seed.get<uint64_t>();
      r.ab = pairing;
    }

    const std::string gp = ptr + "/git";
    const json& g = object(field(j, "git", ptr), gp);
    const json& commit = field(g, "commit", gp);
    if (!commit.is_null()) {
      const std::string sha = str(commit, gp + "/commit");
      if (!is_commit_sha(sha)) bad(gp + "/commit", "'" + sha + "' is not 40 hex digits or null");
      r.git.commit = sha;
    }
    r.git.branch = str_or_null(optional_field(g, "branch"), gp + "/branch");
    r.git.subject = str_or_null(optional_field(g, "subject"), gp + "/subject");
    r.git.time = str_or_null(optional_field(g, "time"), gp + "/time");
    if (const json* d = optional_field(g, "dirty"); d && !d->is_null())
      r.git.dirty = boolean(*d, gp + "/dirty");
    // Documents without a state (written by hand, or by another tool) say only what they know.
    r.git.state = str_or_null(optional_field(g, "state"), gp + "/state")
                      .value_or(r.git.commit ? "ok" : "unknown");
    r.git.repo_path = str_or_null(optional_field(g, "repo_path"), gp + "/repo_path").value_or("");
    r.git.remote = str_or_null(optional_field(g, "remote"), gp + "/remote");

    const std::string ep = ptr + "/env";
    const json& env = object(field(j, "env", ptr), ep);
    for (const auto& [name, value] : env.items()) {
      if (value.is_string())
        r.env[name] = value.get<std::string>();
      else if (value.is_number() || value.is_boolean())
        r.env[name] = value.dump();
      else if (!value.is_null())
        bad(ep + "/" + name, std::string("expected a string, got ") + value.type_name());
    }
    if (const json* cfg = optional_field(j, "config"); cfg && !cfg->is_null())
      r.config_json = cfg->dump();

    const json& cells = array(field(j, "cells", ptr), ptr + "/cells");
    for (size_t i = 0; i < cells.size(); ++i)
      r.cells.push_back(cell(cells[i], ptr + "/cells/" + std::to_string(i)));
    validate_run(r, source + ": " + ptr);  // gen_tokens vs. samples, timestamps, value ranges
    return r;
  }
};

}  // namespace

json run_to_json(const Run& run, bool with_samples) {
  json cells = json::array();
  for (const auto& c : run.cells) {
    json metrics = json::object();
    for (const auto& [name, value] : c.metrics) metrics[valid_utf8(name)] = value;
    json cell = {{"key", cell_key_to_json(c.key)},
                 {"status", to_string(c.status)},
                 {"reason", opt_str(c.reason)},
                 {"metrics", metrics}};
    if (with_samples) {
      cell["samples"] = {{"prefill_ms", c.samples.prefill_ms}, {"decode_ms", c.samples.decode_ms}};
      if (!c.samples.ab_position.empty()) cell["samples"]["ab_position"] = c.samples.ab_position;
    }
    if (with_samples && c.profile) cell["profile"] = profile_to_json(*c.profile);
    cells.push_back(std::move(cell));
  }
  const json env = environment_to_json(run.env);
  json config = json::parse(run.config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) config = valid_utf8(run.config_json);
  const auto& g = run.git;
  return {{"id", run.id},
          {"uuid", run.uuid.empty() ? json() : json(valid_utf8(run.uuid))},
          {"status", to_string(run.status)},
          {"started_at", run.started_at},
          {"finished_at", run.finished_at.empty() ? json() : json(run.finished_at)},
          {"git",
           {{"state", valid_utf8(g.state)},
            {"commit", opt_str(g.commit)},
            {"branch", opt_str(g.branch)},
            {"dirty", g.dirty},
            {"subject", opt_str(g.subject)},
            {"time", opt_str(g.time)},
            {"repo_path", valid_utf8(g.repo_path)},
            {"remote", opt_str(g.remote)}}},
          {"env", env},
          {"config", config},
          {"ab", run.ab ? json{{"uuid", run.ab->uuid},
                               {"side", run.ab->side},
                               {"design", run.ab->design},
                               {"seed", run.ab->seed}}
                        : json()},
          {"cells", cells}};
}

std::string runs_to_json(const std::vector<Run>& runs, bool with_samples) {
  json arr = json::array();
  for (const auto& r : runs) arr.push_back(run_to_json(r, with_samples));
  return json{{"runs", std::move(arr)}}.dump();
}

std::vector<Run> runs_from_json(const std::string& text, const std::string& source_name) {
  Parser p{source_name};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw UsageError(source_name + ": not valid JSON (" + e.what() + ")");
  }
  std::vector<Run> runs;
  if (doc.is_object() && !doc.contains("runs") && doc.contains("cells")) {
    runs.push_back(p.run(doc, ""));
    return runs;
  }
  p.object(doc, "");
  const json& arr = p.array(p.field(doc, "runs", ""), "/runs");
  for (size_t i = 0; i < arr.size(); ++i)
    runs.push_back(p.run(arr[i], "/runs/" + std::to_string(i)));
  return runs;
}

}  // namespace pg::store
