#include "web/view_codec.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/version.h"

namespace pg::web {

namespace {
constexpr int kFormat = 1;  // bump when SeriesView or its computation changes meaning

nlohmann::json opt(const std::optional<double>& d) {
  return d ? nlohmann::json(*d) : nlohmann::json(nullptr);
}
std::optional<double> opt(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}
}  // namespace

std::string view_cache_key(Metric m, const SeriesRules& rules) {
  char settings[96];
  std::snprintf(settings, sizeof settings, "alpha=%.17g min_effect=%.17g", rules.alpha,
                rules.min_effect);
  return std::string("v") + std::to_string(kFormat) + " " + kVersion + " " + metric_info(m).name +
         " " + settings + " branch=" + rules.branch;
}

// Arrays, not objects: a 1,000-point view is read at every start-up.
std::string encode_view(const SeriesView& v) {
  nlohmann::json pts = nlohmann::json::array();
  for (const SeriesPoint& p : v.points)
    pts.push_back({p.commit, p.subject, p.time, p.run_ids, p.median, p.spread.min, p.spread.q1,
                   p.spread.q3, p.spread.max, p.spread.n, p.flag});
  nlohmann::json cps = nlohmann::json::array();
  for (const SeriesChange& c : v.changes)
    cps.push_back(
        {c.index, c.commit, c.before, c.after, c.relative, c.p_value, c.direction, c.flagged});
  nlohmann::json lc = nullptr;
  if (v.last_compare)
    lc = {v.last_compare->base, v.last_compare->head, v.last_compare->verdict,
          opt(v.last_compare->ratio), opt(v.last_compare->p_adjusted)};
  const nlohmann::json j = {kFormat, pts, cps, lc, v.status, v.skipped_cells};
  const std::vector<uint8_t> bytes = nlohmann::json::to_msgpack(j);
  return std::string(bytes.begin(), bytes.end());
}

std::optional<SeriesView> decode_view(std::string_view bytes, const SeriesInfo& info, Metric m,
                                      const SeriesRules& rules) {
  try {
    const nlohmann::json j = nlohmann::json::from_msgpack(bytes.begin(), bytes.end());
    if (!j.is_array() || j.size() != 6 || j[0] != kFormat) return std::nullopt;
    SeriesView v;
    v.info = info;
    v.metric = m;
    v.rules = rules;
    v.points.reserve(j[1].size());
    for (const auto& a : j[1]) {
      SeriesPoint p;
      p.commit = a[0].get<std::string>();
      p.subject = a[1].get<std::string>();
      p.time = a[2].get<std::string>();
      p.run_ids = a[3].get<std::vector<int64_t>>();
      p.median = a[4].get<double>();
      p.spread = {a[5].get<double>(), a[6].get<double>(), a[7].get<double>(), a[8].get<double>(),
                  a[9].get<size_t>()};
      p.flag = a[10].get<std::string>();
      if (p.run_ids.empty()) return std::nullopt;
      v.points.push_back(std::move(p));
    }
    for (const auto& a : j[2]) {
      SeriesChange c;
      c.index = a[0].get<size_t>();
      c.commit = a[1].get<std::string>();
      c.before = a[2].get<double>();
      c.after = a[3].get<double>();
      c.relative = a[4].get<double>();
      c.p_value = a[5].get<double>();
      c.direction = a[6].get<std::string>();
      c.flagged = a[7].get<bool>();
      if (c.index >= v.points.size()) return std::nullopt;
      v.changes.push_back(std::move(c));
    }
    if (!j[3].is_null())
      v.last_compare = LastCompare{j[3][0].get<std::string>(), j[3][1].get<std::string>(),
                                   j[3][2].get<std::string>(), opt(j[3][3]), opt(j[3][4])};
    v.status = j[4].get<std::string>();
    v.skipped_cells = j[5].get<size_t>();
    return v;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace pg::web
