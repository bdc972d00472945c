// One series as the trend page and the overview show it: one point per commit in history order,
// the spread of its repetitions, change points, and a status (regressed / improved / steady).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/history.h"
#include "core/metrics.h"
#include "gate/gate.h"
#include "store/store.h"

namespace pg::web {

// The metrics the dashboard charts. Each is one row of core/metrics.h's table, which alone says its
// name, unit, label and direction (docs/CONTRIBUTING.md, "Adding a key field or a metric").
enum class Metric { tpot_ms, prefill_ms, decode_tok_s, peak_alloc_bytes };

struct MetricInfo : MetricDef {
  Metric metric;
  bool higher_is_worse() const { return better == Better::lower; }
};
const std::vector<MetricInfo>& all_metrics();
const MetricInfo& metric_info(Metric m);
std::optional<Metric> parse_metric(std::string_view name);

// Distribution of the repetitions pooled over every run of one commit.
struct Spread {
  double min = 0, q1 = 0, q3 = 0, max = 0;
  size_t n = 0;
};

struct SeriesPoint {
  std::string commit;  // full SHA; empty for a run made outside a git repository
  std::string subject;
  std::string time;  // commit time, or the run's start when there is no commit
  std::vector<int64_t> run_ids;
  double median = 0;
  Spread spread;
  std::string flag;  // "", "regression" or "improvement" (a change point or the last compare)
};

struct SeriesChange {
  size_t index = 0;  // first point of the new segment
  std::string commit;
  double before = 0, after = 0, relative = 0, p_value = 1;
  std::string direction;  // "regression" | "improvement" (by the metric's sense)
  bool flagged = false;   // |relative| reaches the gate's min_effect
};

// The gate (gate/gate.h) between the last two commits of the series, on this cell only.
struct LastCompare {
  std::string base, head, verdict;
  std::optional<double> ratio, p_adjusted;
};

// The one rule the chart, the overview and the compare page share: the gate's settings (serve's
// alpha and min_effect, app/gate_settings.h; the gate's defaults unless given) and the branch
// drawn.
struct SeriesRules {
  double alpha = gate::GateOptions{}.alpha;
  double min_effect = gate::GateOptions{}.min_effect;
  std::string branch;  // only commits measured on this branch; empty: every run
};

// A series' badge. A view's own status is one of no_data, steady, improved, regressed; the
// overview shows acknowledged for a regression someone owns (shown_status, web/views/models.h).
enum class SeriesStatus { no_data, steady, improved, regressed, acknowledged };
const char* to_string(SeriesStatus s);  // "no-data", "steady", ...: the JSON's and CSS's names
std::optional<SeriesStatus> parse_series_status(std::string_view name);

struct SeriesView {
  store::SeriesInfo info;
  Metric metric = Metric::tpot_ms;
  SeriesRules rules;
  std::vector<SeriesPoint> points;
  std::vector<SeriesChange> changes;
  std::optional<LastCompare> last_compare;  // tpot_ms (the gated metric) only
  SeriesStatus status = SeriesStatus::no_data;
  size_t skipped_cells = 0;  // oom / invalid / error cells: stored, not drawn
};

// An improvement counts for the status while it lies within this many last points; a regression
// counts until a later change point undoes it (or someone dismisses or fixes it: web/triage).
inline constexpr size_t kRecentPoints = 10;

// The points and change points are the series' history (app/history.h), as `perfgate changes`
// finds them; this adds the chart's spread, flags, the last compare and the status.
// `detect`: where the change points come from (app::HistoryOptions::detect); computed when empty.
SeriesView build_series_view(const store::SeriesInfo& info,
                             std::vector<store::SeriesSample> samples, Metric metric,
                             const SeriesRules& rules = {},
                             decltype(app::HistoryOptions::detect) detect = {});

// The regression the series currently stands in, if any: the latest flagged change point when it
// is a regression (not undone by a later flagged improvement), else the gate's verdict on the last
// two commits when that is a regression. index = its first bad point.
struct CurrentRegression {
  size_t index = 0;
  double relative = 0;  // the size of the step (after / before - 1)
  double before = 0;    // the level before it
  std::string source;   // "change point" | "last two commits"
  // Where the series came back to within min effect of `before` (returned_after), if it did.
  std::optional<size_t> returned_at;
};
std::optional<CurrentRegression> current_regression(const SeriesView& v);
// LNT's "detected fixed": the first point of a later level that a change point found in the
// points from `index` on and that lies within min effect of `before`. The search starts at the
// regression, so a slowdown that lasted a few commits, which the whole series' change points may
// not resolve, is still seen to end there.
std::optional<size_t> returned_after(const SeriesView& v, size_t index, double before);
// Every regression the series' history shows now, oldest first: each flagged change point that
// is a regression, then current_regression's "last two commits" when it is one; each with its
// returned_after. An alert stays listed whether or not a later change point stands in front of
// it, and the server keeps every one it listed (web/views/triage.h).
std::vector<CurrentRegression> regression_history(const SeriesView& v);

// The /api/v1/series/{id} document.
nlohmann::json series_view_json(const SeriesView& v);
// The "latest" object of /api/v1/series: last point, status, last compare.
nlohmann::json series_latest_json(const SeriesView& v);
nlohmann::json point_json(const SeriesPoint& p);

}  // namespace pg::web
