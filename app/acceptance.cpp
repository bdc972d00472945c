// Accepted slowdowns: from a stored gate's regressions to an acceptance, and from the
// acceptances of a ref to the ratios a later gate tests against (app/acceptance.h).
#include "app/acceptance.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "common/errors.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"

namespace pg::app {

store::Store::Acceptance accept_gate(store::Store& store, int64_t gate_id,
                                     const std::string& reason, const std::string& author,
                                     const std::string& via) {
  const auto found = store.gate_results(gate_id - 1, 1);
  if (found.empty() || found[0].id != gate_id)
    throw UsageError("gate " + std::to_string(gate_id) + ": no such stored gate result");
  const store::Store::GateRecord& g = found[0];
  if (g.ref.empty())
    throw UsageError("gate " + std::to_string(gate_id) +
                     " has no ref: an acceptance is for the later gates of one ref (a pull "
                     "request's), so only a gate stored with its ref can be accepted");
  store::Store::Acceptance a;
  a.ref = g.ref;
  a.gate_id = g.id;
  a.reason = reason;
  a.author = author;
  a.via = via;
  const auto doc = nlohmann::json::parse(g.result);
  for (const auto& c : doc.value("cells", nlohmann::json::array())) {
    if (c.value("verdict", "") != "regression" || !c.contains("ratio") || !c["ratio"].is_number())
      continue;
    a.cells.push_back({cell_key_from_json(c.at("key"), "/cells/key"),
                       c.value("metric", std::string("tpot_ms")), c["ratio"].get<double>()});
  }
  if (a.cells.empty())
    throw UsageError("gate " + std::to_string(gate_id) + " found no regression to accept");
  return store.add_acceptance(std::move(a));
}

std::vector<store::Store::Acceptance> apply_acceptances(
    const std::vector<store::Store::Acceptance>& all, const std::string& ref,
    gate::GateOptions& options) {
  // Oldest first: a newer acceptance of a cell replaces an older one (a second slowdown accepted).
  std::map<std::pair<CellKey, std::string>, const store::Store::Acceptance*> newest;
  for (const store::Store::Acceptance& a : all) {
    if (a.ref != ref || a.revoked_by) continue;
    for (const store::Store::AcceptedCell& c : a.cells) {
      options.accepted_ratio[{c.key, c.metric}] = c.ratio;
      newest[{c.key, c.metric}] = &a;
    }
  }
  std::set<int64_t> ids;
  std::vector<store::Store::Acceptance> used;
  for (const auto& [cell, a] : newest)
    if (ids.insert(a->id).second) used.push_back(*a);
  return used;
}

std::vector<std::string> acceptance_notes(const std::vector<store::Store::Acceptance>& used,
                                          const gate::GateResult& result) {
  std::vector<std::string> notes;
  for (const store::Store::Acceptance& a : used) {
    std::string cells;
    int n = 0;
    for (const store::Store::AcceptedCell& ac : a.cells)
      for (const gate::CellComparison& c : result.cells)
        if (c.key == ac.key && c.metric == ac.metric && c.accepted_ratio) {
          cells += fmt::format("{}{} {} {:+.1f}% ({})", n++ ? "; " : "", cell_label(c.key),
                               c.metric, 100.0 * (ac.ratio - 1.0), to_string(c.verdict));
        }
    if (n == 0) continue;
    notes.push_back(fmt::format(
        "Accepted slowdown {} of {}: {} by {} ({}) at {}{}: \"{}\". Such a cell is tested against "
        "the base times its accepted ratio; slower than that by the min effect, it fails again.",
        a.id, a.ref, cells, a.author, a.via, a.at,
        a.gate_id ? fmt::format(" (gate {})", *a.gate_id) : "", a.reason));
  }
  return notes;
}

nlohmann::json acceptance_json(const store::Store::Acceptance& a) {
  nlohmann::json cells = nlohmann::json::array();
  for (const store::Store::AcceptedCell& c : a.cells)
    cells.push_back({{"key", cell_key_to_json(c.key)}, {"metric", c.metric}, {"ratio", c.ratio}});
  nlohmann::json j = {{"id", a.id},         {"ref", a.ref}, {"cells", cells}, {"reason", a.reason},
                      {"author", a.author}, {"via", a.via}, {"at", a.at}};
  j["gate_id"] = a.gate_id ? nlohmann::json(*a.gate_id) : nlohmann::json(nullptr);
  j["revoked"] = a.revoked_by ? nlohmann::json{{"id", *a.revoked_by},
                                               {"reason", a.revoked_reason},
                                               {"author", a.revoked_author},
                                               {"at", a.revoked_at}}
                              : nlohmann::json(nullptr);
  return j;
}

nlohmann::json acceptances_json(const std::vector<store::Store::Acceptance>& all) {
  nlohmann::json out = nlohmann::json::array();
  for (const store::Store::Acceptance& a : all) out.push_back(acceptance_json(a));
  return {{"acceptances", out}};
}

std::vector<store::Store::Acceptance> acceptances_from_json(const std::string& text,
                                                            const std::string& source) {
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("acceptances") ||
      !doc["acceptances"].is_array())
    throw UsageError(source + ": not an acceptances list ({\"acceptances\": [...]})");
  std::vector<store::Store::Acceptance> out;
  size_t i = 0;
  for (const auto& j : doc["acceptances"]) {
    const std::string ptr = "/acceptances/" + std::to_string(i++);
    try {
      store::Store::Acceptance a;
      a.id = j.at("id").get<int64_t>();
      a.ref = j.at("ref").get<std::string>();
      if (j.contains("gate_id") && !j["gate_id"].is_null()) a.gate_id = j["gate_id"].get<int64_t>();
      size_t k = 0;
      for (const auto& c : j.at("cells"))
        a.cells.push_back(
            {cell_key_from_json(c.at("key"), ptr + "/cells/" + std::to_string(k++) + "/key"),
             c.at("metric").get<std::string>(), c.at("ratio").get<double>()});
      a.reason = j.at("reason").get<std::string>();
      a.author = j.at("author").get<std::string>();
      a.via = j.at("via").get<std::string>();
      a.at = j.at("at").get<std::string>();
      if (j.contains("revoked") && !j["revoked"].is_null()) {
        const auto& r = j["revoked"];
        a.revoked_by = r.at("id").get<int64_t>();
        a.revoked_reason = r.value("reason", "");
        a.revoked_author = r.value("author", "");
        a.revoked_at = r.value("at", "");
      }
      out.push_back(std::move(a));
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(source + ": " + ptr + ": " + e.what());
    }
  }
  return out;
}

}  // namespace pg::app
