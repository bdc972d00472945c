// Server-rendered HTML. Each page is one function from the data its JSON twin also shows.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "web/models.h"
#include "web/page_frame.h"

namespace pg::web {

std::string render_overview_page(const OverviewModel& m, const std::string& query);
std::string render_trend_page(const TrendModel& m);
std::string render_compare_form(const CommitCatalog& catalog, const std::string& base,
                                const std::string& head, const std::string& device,
                                const std::string& error);
std::string render_compare_page(const CompareView& v, const CommitCatalog& catalog,
                                const std::string& device);
std::string render_run_page(const Run& run, const std::vector<int64_t>& series_ids);
std::string render_runs_page(const std::vector<Run>& runs);

// Inline SVG sparkline of the last points' medians, dot coloured by status.
std::string sparkline_svg(const SeriesView& v, size_t max_points = 40);

}  // namespace pg::web

namespace pg::web {
// Numbers for people: 3 significant digits in the display range, bytes in KiB/MiB/GiB.
std::string fmt_num(double v);
std::string fmt_metric(double v, const std::string& unit);
}  // namespace pg::web
