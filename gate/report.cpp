#include "gate/report.h"

#include <unistd.h>

#include <cstdlib>
#include <ostream>

#include "common/errors.h"
#include "gate/gate_json.h"
#include "gate/report_explain.h"
#include "gate/report_links.h"

namespace pg::gate {

std::unique_ptr<GateReporter> make_reporter(const std::string& format, bool color) {
  if (format == "table") return std::make_unique<GateTableReporter>(color);
  if (format == "markdown") return std::make_unique<GateMarkdownReporter>();
  if (format == "json") return std::make_unique<GateJsonReporter>();
  if (format == "csv") return std::make_unique<GateCsvReporter>();
  throw SettingError(SettingError::setting("format") + ": unknown format '" + format +
                     "' (expected table, markdown, json or csv)");
}

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return isatty(STDOUT_FILENO) == 1;
}

std::string escape_command_data(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%')
      out += "%25";
    else if (c == '\r')
      out += "%0D";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
  return out;
}

std::string escape_command_property(const std::string& s) {
  std::string out;
  for (char c : escape_command_data(s)) {
    if (c == ':')
      out += "%3A";
    else if (c == ',')
      out += "%2C";
    else
      out += c;
  }
  return out;
}

void GateJsonReporter::report(const GateResult& result, const ReportInfo& info,
                              std::ostream& out) const {
  nlohmann::json j = gate_to_json(result);
  if (!info.base_spelled.empty() || !info.head_spelled.empty()) {
    j["revisions"] = {{"base", {{"spelled", info.base_spelled}, {"source", info.base_source}}},
                      {"head", {{"spelled", info.head_spelled}, {"source", info.head_source}}}};
  }
  if (!info.notes.empty()) j["notes"] = info.notes;
  for (size_t i = 0; i < result.cells.size(); ++i) {
    const CellComparison& c = result.cells[i];  // explanations are of decode latency's cells
    const CellExplanation* e =
        c.metric == "tpot_ms" ? gate::report_explain::find(info.explanations, c.key) : nullptr;
    j["cells"][i]["explain"] = e ? gate::report_explain::to_json(*e) : nlohmann::json();
    if (!info.dashboard_url.empty())
      j["cells"][i]["trend_url"] = gate::report_links::trend_url(info.dashboard_url, c);
  }
  if (!info.dashboard_url.empty())
    j["links"] = gate::report_links::to_json(info.dashboard_url, result);
  out << j.dump(2) << '\n';
}

}  // namespace pg::gate
