// Links from a gate's reports to a perfgate dashboard (ReportInfo::dashboard_url): the compare
// page of the pair under the gate's settings, and each cell's trend. docs/FORMATS.md, "links";
// the routes are docs/WEB.md's.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "gate/gate.h"

namespace pg::gate::report_links {

// A dashboard's URL is http(s)://HOST[:PORT][/PREFIX], with no query, fragment, space or quote
// (it is spliced into Markdown, HTML and workflow commands). Throws SettingError naming
// dashboard_url.
void check_dashboard_url(const std::string& url);

// DASH/compare?base=SHA&head=SHA, plus alpha, min_effect, metrics and correction where the gate's
// differ from the defaults (the compare page's query parameters, docs/WEB.md).
std::string compare_url(const std::string& dashboard, const GateResult& r);

// DASH/series?KEY&metric=METRIC: the dashboard's trend of the cell's series
// (core/cell_key_query.h: a key, since each store numbers its series itself).
std::string trend_url(const std::string& dashboard, const CellComparison& c);

// The compare JSON's "links" object: {"dashboard": DASH, "compare": URL}; each cell's trend_url
// goes into the cell itself (GateJsonReporter).
nlohmann::json to_json(const std::string& dashboard, const GateResult& r);

}  // namespace pg::gate::report_links
