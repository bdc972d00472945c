// Stored gate results as alerts (docs/WEB.md, "Regressions"). A gate is an alert when it is the
// newest stored gate of its base/head pair and its verdict is regression: a gate re-run on the
// same pair replaces the earlier verdict. It stays open until someone acknowledges (still open),
// dismisses (with a reason) or marks it fixed, or until a later gate on the same ref passes
// ("superseded": the pull request was fixed by a new push).
#include <algorithm>
#include <map>
#include <tuple>

#include "web/views/triage.h"

namespace pg::web {

void add_gate_alerts(store::Store& store, RegressionsModel& m) {
  const auto gates = store.gate_results();  // id order: oldest first
  std::map<int64_t, std::vector<store::Store::GateEvent>> log;
  for (auto& e : store.gate_events()) log[e.gate_id].push_back(std::move(e));
  std::map<std::pair<std::string, std::string>, int64_t> newest_of_pair;
  for (const auto& g : gates) newest_of_pair[{g.base, g.head}] = g.id;
  for (size_t i = 0; i < gates.size(); ++i) {
    const auto& g = gates[i];
    if (g.verdict != "regression" || newest_of_pair[{g.base, g.head}] != g.id) continue;
    GateAlert a;
    a.gate = g;
    a.settings = nlohmann::json::parse(g.settings, nullptr, false);
    const auto result = nlohmann::json::parse(g.result, nullptr, false);
    a.worst = app::worst_regressed_cell(result);
    if (result.contains("cells") && result["cells"].is_array()) {
      a.cells = result["cells"].size();
      for (const auto& c : result["cells"])
        if (c.is_object() && c.value("verdict", "") == "regression") ++a.regressed_cells;
    }
    if (auto it = log.find(g.id); it != log.end()) a.events = it->second;
    a.state = triage_state(a.events.empty() ? "" : a.events.back().action);
    if (a.is_open() && !g.ref.empty())
      for (size_t j = i + 1; j < gates.size(); ++j)
        if (gates[j].ref == g.ref && gates[j].verdict == "pass") {
          a.state = AlertState::superseded;
          a.superseded_by = gates[j].head;
        }
    if (a.state == AlertState::open) ++m.open;
    if (a.state == AlertState::acknowledged) ++m.acknowledged;
    if (!a.is_open()) ++m.closed;
    m.gate_alerts.push_back(std::move(a));
  }
  std::stable_sort(m.gate_alerts.begin(), m.gate_alerts.end(), [](const auto& x, const auto& y) {
    return std::make_tuple(!x.is_open(), -x.gate.id) < std::make_tuple(!y.is_open(), -y.gate.id);
  });
}

nlohmann::json gate_alerts_json(const RegressionsModel& m) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& a : m.gate_alerts) {
    const auto& g = a.gate;
    list.push_back(
        {{"gate_id", g.id},
         {"base", g.base},
         {"commit", g.head},  // the first bad commit
         {"ref", g.ref.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.ref)},
         {"relative", a.worst ? nlohmann::json(a.worst->relative) : nlohmann::json(nullptr)},
         {"worst_cell", a.worst ? nlohmann::json(a.worst->label) : nlohmann::json(nullptr)},
         {"regressed_cells", a.regressed_cells},
         {"cells", a.cells},
         {"settings", a.settings},
         {"submitted_by", g.submitted_by},
         {"created_at", g.created_at},
         {"state", to_string(a.state)},
         {"superseded_by",
          a.superseded_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.superseded_by)},
         {"events", triage_events_json(a.events)}});
  }
  return list;
}

}  // namespace pg::web
