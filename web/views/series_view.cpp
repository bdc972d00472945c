#include "web/views/series_view.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "app/history.h"
#include "common/descriptive.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "core/environment_json.h"
#include "core/metrics.h"
#include "gate/gate.h"
#include "stats/changepoint.h"

namespace pg::web {

const std::vector<MetricInfo>& all_metrics() {
  // The rows of core/metrics.h's table, in the order the trend page's tabs show them.
  static const std::vector<MetricInfo> m = [] {
    std::vector<MetricInfo> out;
    for (auto [metric, name] : {std::pair{Metric::tpot_ms, "tpot_ms"},
                                {Metric::prefill_ms, "prefill_ms"},
                                {Metric::decode_tok_s, "decode_tok_s"},
                                {Metric::peak_alloc_bytes, "peak_alloc_bytes"}}) {
      out.push_back({*find_metric(name), metric});
    }
    return out;
  }();
  return m;
}

const MetricInfo& metric_info(Metric m) {
  for (const auto& i : all_metrics())
    if (i.metric == m) return i;
  return all_metrics().front();
}

std::optional<Metric> parse_metric(std::string_view name) {
  for (const auto& i : all_metrics())
    if (name == i.name) return i.metric;
  return std::nullopt;
}

const char* to_string(SeriesStatus s) {
  switch (s) {
    case SeriesStatus::no_data:
      return "no-data";
    case SeriesStatus::steady:
      return "steady";
    case SeriesStatus::improved:
      return "improved";
    case SeriesStatus::regressed:
      return "regressed";
    case SeriesStatus::acknowledged:
      return "acknowledged";
  }
  return "no-data";
}

std::optional<SeriesStatus> parse_series_status(std::string_view name) {
  for (SeriesStatus s : {SeriesStatus::no_data, SeriesStatus::steady, SeriesStatus::improved,
                         SeriesStatus::regressed, SeriesStatus::acknowledged})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

namespace {

std::optional<LastCompare> compare_last_two(const store::SeriesInfo& info, const app::History& h,
                                            const SeriesRules& rules) {
  if (h.points.size() < 2) return std::nullopt;
  const app::HistoryPoint& base = h.points[h.points.size() - 2];
  const app::HistoryPoint& head = h.points.back();
  if (base.commit.empty() || head.commit.empty()) return std::nullopt;
  auto runs_of = [&](const app::HistoryPoint& point) {
    std::vector<Run> runs;
    for (size_t i : point.samples) {
      const store::SeriesSample* s = &h.samples[i];
      Run r;
      r.id = s->run_id;
      r.status = RunStatus::complete;
      r.git.commit = s->commit;
      r.env = info.env;
      CellResult c;
      c.key = info.key;
      c.status = s->status;
      c.metrics = s->metrics;
      // The gate takes tpot per repetition as sum(decode_ms[rep]) / (gen_tokens - 1); one step of
      // tpot x (gen_tokens - 1) per repetition gives it exactly the stored repetition values.
      const double steps = info.key.gen_tokens > 1 ? info.key.gen_tokens - 1 : 1;
      for (double t : s->rep_tpot_ms) c.samples.decode_ms.push_back({t * steps});
      r.cells.push_back(std::move(c));
      runs.push_back(std::move(r));
    }
    return runs;
  };
  gate::GateOptions opt;
  opt.alpha = rules.alpha;
  opt.min_effect = rules.min_effect;
  const gate::GateResult r =
      gate::evaluate_gate(base.commit, runs_of(base), head.commit, runs_of(head), opt);
  if (r.cells.empty()) return std::nullopt;
  const gate::CellComparison& c = r.cells.front();
  return LastCompare{base.commit, head.commit, to_string(c.verdict), c.ratio, c.p_adjusted};
}

}  // namespace

SeriesView build_series_view(const store::SeriesInfo& info,
                             std::vector<store::SeriesSample> samples, Metric metric,
                             const SeriesRules& rules,
                             decltype(app::HistoryOptions::detect) detect) {
  SeriesView v;
  v.info = info;
  v.metric = metric;
  v.rules = rules;
  const MetricInfo& mi = metric_info(metric);
  app::HistoryOptions hopt;
  hopt.values = [&](const store::SeriesSample& s) {
    return app::point_values(s, info.key, mi.name);
  };
  hopt.branch = rules.branch;
  hopt.detect = std::move(detect);
  const app::History h = app::history(std::move(samples), hopt);
  v.skipped_cells = h.skipped_cells;
  for (const app::HistoryPoint& hp : h.points) {
    SeriesPoint p;
    p.commit = hp.commit;
    p.subject = hp.subject;
    p.time = hp.time;
    p.run_ids = hp.run_ids;
    p.median = hp.median;
    p.spread = {hp.values.front(), sorted_quantile(hp.values, 0.25),
                sorted_quantile(hp.values, 0.75), hp.values.back(), hp.values.size()};
    v.points.push_back(std::move(p));
  }

  for (const stats::ChangePoint& cp : h.changes) {
    SeriesChange c;
    c.index = cp.index;
    c.commit = v.points[cp.index].commit;
    c.before = cp.before;
    c.after = cp.after;
    c.p_value = cp.p_value;
    c.relative = cp.before != 0 ? cp.after / cp.before - 1.0 : 0.0;
    const bool worse = mi.higher_is_worse() ? cp.after > cp.before : cp.after < cp.before;
    c.direction = worse ? "regression" : "improvement";
    c.flagged = std::abs(c.relative) >= rules.min_effect;
    if (c.flagged) v.points[cp.index].flag = c.direction;
    v.changes.push_back(c);
  }

  if (metric == Metric::tpot_ms) {
    v.last_compare = compare_last_two(info, h, rules);
    if (v.last_compare &&
        (v.last_compare->verdict == "regression" || v.last_compare->verdict == "improvement"))
      v.points.back().flag = v.last_compare->verdict;
  }

  if (!v.points.empty()) {
    v.status = SeriesStatus::steady;
    const size_t n = v.points.size();
    const SeriesChange* last = nullptr;
    for (const SeriesChange& c : v.changes)
      if (c.flagged) last = &c;
    if (last && last->direction == "improvement" && last->index + kRecentPoints >= n)
      v.status = SeriesStatus::improved;
    if (v.last_compare && v.last_compare->verdict == "improvement")
      v.status = SeriesStatus::improved;
    if (current_regression(v)) v.status = SeriesStatus::regressed;
  }
  return v;
}

std::optional<CurrentRegression> current_regression(const SeriesView& v) {
  const SeriesChange* last = nullptr;
  for (const SeriesChange& c : v.changes)
    if (c.flagged) last = &c;
  if (last && last->direction == "regression")
    return CurrentRegression{last->index, last->relative, last->before, "change point", {}};
  if (v.last_compare && v.last_compare->verdict == "regression" && v.points.size() >= 2)
    return CurrentRegression{v.points.size() - 1,
                             v.last_compare->ratio.value_or(1.0) - 1.0,
                             v.points[v.points.size() - 2].median,
                             "last two commits",
                             {}};
  return std::nullopt;
}

std::optional<size_t> returned_after(const SeriesView& v, size_t index, double before) {
  if (index >= v.points.size() || before == 0) return std::nullopt;
  std::vector<double> medians;
  for (size_t i = index; i < v.points.size(); ++i) medians.push_back(v.points[i].median);
  const bool higher_is_worse = metric_info(v.metric).higher_is_worse();
  for (const stats::ChangePoint& cp : stats::detect_change_points(medians)) {
    const bool better = higher_is_worse ? cp.after < cp.before : cp.after > cp.before;
    if (better && std::abs(cp.after / before - 1.0) < v.rules.min_effect) return index + cp.index;
  }
  return std::nullopt;
}

std::vector<CurrentRegression> regression_history(const SeriesView& v) {
  std::vector<CurrentRegression> out;
  for (const SeriesChange& c : v.changes)
    if (c.flagged && c.direction == "regression")
      out.push_back({c.index, c.relative, c.before, "change point", {}});
  if (auto now = current_regression(v); now && now->source != "change point") out.push_back(*now);
  for (CurrentRegression& r : out) r.returned_at = returned_after(v, r.index, r.before);
  return out;
}

nlohmann::json point_json(const SeriesPoint& p) {
  nlohmann::json j;
  j["commit"] = p.commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.commit);
  j["subject"] = p.subject;
  j["time"] = p.time;
  j["run_id"] = p.run_ids.back();  // the latest run of the commit: what a click opens
  j["run_ids"] = p.run_ids;
  j["median"] = p.median;
  j["spread"] = {{"min", p.spread.min},
                 {"q1", p.spread.q1},
                 {"q3", p.spread.q3},
                 {"max", p.spread.max},
                 {"n", p.spread.n}};
  j["flag"] = p.flag.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.flag);
  return j;
}

namespace {
nlohmann::json opt_num(const std::optional<double>& d) {
  return d && std::isfinite(*d) ? nlohmann::json(*d) : nlohmann::json(nullptr);
}
nlohmann::json last_compare_json(const std::optional<LastCompare>& c) {
  if (!c) return nullptr;
  return {{"base", c->base},
          {"head", c->head},
          {"verdict", c->verdict},
          {"ratio", opt_num(c->ratio)},
          {"p_adjusted", opt_num(c->p_adjusted)}};
}
}  // namespace

nlohmann::json series_view_json(const SeriesView& v) {
  const MetricInfo& mi = metric_info(v.metric);
  nlohmann::json j;
  j["id"] = v.info.id;
  j["key"] = cell_key_to_json(v.info.key);
  j["env"] = environment_to_json(v.info.env);
  j["metric"] = mi.name;
  j["unit"] = mi.unit;
  j["higher_is_worse"] = mi.higher_is_worse();
  j["status"] = to_string(v.status);
  j["branch"] = v.rules.branch.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.rules.branch);
  j["rules"] = {{"alpha", v.rules.alpha}, {"min_effect", v.rules.min_effect}};
  j["skipped_cells"] = v.skipped_cells;
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : v.points) pts.push_back(point_json(p));
  j["points"] = std::move(pts);
  nlohmann::json cps = nlohmann::json::array();
  for (const auto& c : v.changes)
    cps.push_back(
        {{"index", c.index},
         {"commit", c.commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.commit)},
         {"before", c.before},
         {"after", c.after},
         {"relative", c.relative},
         {"p_value", c.p_value},
         {"direction", c.direction},
         {"flagged", c.flagged}});
  j["change_points"] = std::move(cps);
  j["last_compare"] = last_compare_json(v.last_compare);
  return j;
}

nlohmann::json series_latest_json(const SeriesView& v) {
  nlohmann::json j;
  j["status"] = to_string(v.status);
  j["points"] = v.points.size();
  if (v.points.empty()) {
    j["commit"] = nullptr;
    j[metric_info(v.metric).name] = nullptr;
  } else {
    const SeriesPoint& p = v.points.back();
    j["commit"] = p.commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.commit);
    j["subject"] = p.subject;
    j["time"] = p.time;
    j["run_id"] = p.run_ids.back();
    j[metric_info(v.metric).name] = p.median;
  }
  j["last_compare"] = last_compare_json(v.last_compare);
  return j;
}

}  // namespace pg::web
