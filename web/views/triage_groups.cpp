// Alert groups: every alert that names one first bad commit is one group (a change that slowed 120
// cells is one row and one click, not 120), with its size, the devices and refs it touched, and
// one state that says whether anything in it still needs a person.
#include <algorithm>
#include <map>
#include <set>

#include "common/descriptive.h"
#include "web/views/series_names.h"
#include "web/views/triage.h"

namespace pg::web {
namespace {

AlertState group_state(const std::vector<AlertState>& states) {
  bool any_open = false, any_ack = false;
  std::set<AlertState> closed;
  for (AlertState s : states) {
    if (s == AlertState::open)
      any_open = true;
    else if (s == AlertState::acknowledged)
      any_ack = true;
    else
      closed.insert(s);
  }
  if (any_open) return AlertState::open;
  if (any_ack) return AlertState::acknowledged;
  return closed.size() == 1 ? *closed.begin() : AlertState::closed;
}

}  // namespace

bool bulk_action_applies(const std::string& action, AlertState state) {
  const bool open = is_open(state);
  if (action == "acknowledge") return state == AlertState::open;
  if (action == "dismiss" || action == "fix") return open;
  if (action == "reopen") return !open;
  return false;
}

std::vector<AlertGroup> alert_groups(const RegressionsModel& m) {
  std::map<std::string, AlertGroup> by_commit;
  std::map<std::string, std::vector<double>> sizes;
  std::map<std::string, std::vector<AlertState>> states;
  std::map<std::string, std::set<std::string>> devices, refs;
  for (size_t i = 0; i < m.alerts.size(); ++i) {
    const RegressionAlert& a = m.alerts[i];
    AlertGroup& g = by_commit[a.commit];
    if (g.commit.empty()) {
      g.commit = a.commit;
      g.subject = a.subject;
      g.time = a.time;
    }
    g.alerts.push_back(i);
    g.commits_since = std::max(g.commits_since, a.commits_since);
    sizes[a.commit].push_back(a.regression.relative);
    states[a.commit].push_back(a.state);
    devices[a.commit].insert(group_device(a.view->info));
  }
  for (size_t i = 0; i < m.gate_alerts.size(); ++i) {
    const GateAlert& a = m.gate_alerts[i];
    AlertGroup& g = by_commit[a.gate.head];
    if (g.commit.empty()) {
      g.commit = a.gate.head;
      g.time = a.gate.created_at;
    }
    g.gate_alerts.push_back(i);
    if (a.worst) sizes[a.gate.head].push_back(a.worst->relative);
    states[a.gate.head].push_back(a.state);
    if (!a.gate.ref.empty()) refs[a.gate.head].insert(a.gate.ref);
  }
  std::vector<AlertGroup> out;
  for (auto& [commit, g] : by_commit) {
    std::vector<double>& s = sizes[commit];
    if (!s.empty()) {
      g.worst = *std::max_element(s.begin(), s.end());
      g.typical = median(s);
    }
    g.state = group_state(states[commit]);
    g.devices.assign(devices[commit].begin(), devices[commit].end());
    g.refs.assign(refs[commit].begin(), refs[commit].end());
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const AlertGroup& x, const AlertGroup& y) {
    return std::make_pair(!x.is_open(), -x.worst) < std::make_pair(!y.is_open(), -y.worst);
  });
  return out;
}

nlohmann::json alert_groups_json(const RegressionsModel& m) {
  nlohmann::json out = nlohmann::json::array();
  for (const AlertGroup& g : m.groups) {
    nlohmann::json series = nlohmann::json::array(), gates = nlohmann::json::array();
    for (size_t i : g.alerts)
      series.push_back(
          {{"series_id", m.alerts[i].view->info.id}, {"state", to_string(m.alerts[i].state)}});
    for (size_t i : g.gate_alerts)
      gates.push_back(
          {{"gate_id", m.gate_alerts[i].gate.id}, {"state", to_string(m.gate_alerts[i].state)}});
    out.push_back({{"commit", g.commit},
                   {"subject", g.subject},
                   {"time", g.time},
                   {"cells", g.alerts.size() + g.gate_alerts.size()},
                   {"worst", g.worst},
                   {"typical", g.typical},
                   {"state", to_string(g.state)},
                   {"devices", g.devices},
                   {"refs", g.refs},
                   {"commits_since", g.commits_since},
                   {"series", series},
                   {"gates", gates}});
  }
  return out;
}

}  // namespace pg::web
