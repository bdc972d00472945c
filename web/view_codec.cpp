#include "web/view_codec.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/version.h"
#include "web/msgpack_writer.h"

namespace pg::web {

namespace {
constexpr int kFormat = 1;  // bump when SeriesView or its computation changes meaning

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
  MsgpackWriter w;
  w.array(6);
  w.uint(kFormat);
  w.array(v.points.size());
  for (const SeriesPoint& p : v.points) {
    w.array(11);
    w.str(p.commit), w.str(p.subject), w.str(p.time);
    w.array(p.run_ids.size());
    for (int64_t id : p.run_ids) w.uint(static_cast<uint64_t>(id));
    w.real(p.median);
    w.real(p.spread.min), w.real(p.spread.q1), w.real(p.spread.q3), w.real(p.spread.max);
    w.uint(p.spread.n);
    w.str(p.flag);
  }
  w.array(v.changes.size());
  for (const SeriesChange& c : v.changes) {
    w.array(8);
    w.uint(c.index), w.str(c.commit);
    w.real(c.before), w.real(c.after), w.real(c.relative), w.real(c.p_value);
    w.str(c.direction), w.boolean(c.flagged);
  }
  if (v.last_compare) {
    const LastCompare& lc = *v.last_compare;
    w.array(5);
    w.str(lc.base), w.str(lc.head), w.str(lc.verdict);
    for (const auto& d : {lc.ratio, lc.p_adjusted}) d ? w.real(*d) : w.nil();
  } else {
    w.nil();
  }
  w.str(v.status);
  w.uint(v.skipped_cells);
  return w.take();
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

std::string change_points_cache_key(Metric m, const std::string& branch,
                                    const ChangePointOptions& o) {
  char options[128];
  std::snprintf(options, sizeof options, "alpha=%.17g permutations=%d seed=%llu min_segment=%zu",
                o.alpha, o.permutations, static_cast<unsigned long long>(o.seed), o.min_segment);
  return std::string("changes v") + std::to_string(kFormat) + " " + kVersion + " " +
         metric_info(m).name + " " + options + " branch=" + branch;
}

std::string encode_change_points(const std::vector<double>& medians,
                                 const std::vector<ChangePoint>& changes) {
  MsgpackWriter w;
  w.array(3);
  w.uint(kFormat);
  w.array(medians.size());
  for (double m : medians) w.real(m);
  w.array(changes.size());
  for (const ChangePoint& c : changes) {
    w.array(4);
    w.uint(c.index), w.real(c.before), w.real(c.after), w.real(c.p_value);
  }
  return w.take();
}

std::optional<std::vector<ChangePoint>> decode_change_points(std::string_view bytes,
                                                             const std::vector<double>& medians) {
  try {
    const nlohmann::json j = nlohmann::json::from_msgpack(bytes.begin(), bytes.end());
    if (!j.is_array() || j.size() != 3 || j[0] != kFormat) return std::nullopt;
    if (j[1].get<std::vector<double>>() != medians) return std::nullopt;
    std::vector<ChangePoint> out;
    for (const auto& a : j[2]) {
      ChangePoint c{a[0].get<size_t>(), a[1].get<double>(), a[2].get<double>(), a[3].get<double>()};
      if (c.index >= medians.size()) return std::nullopt;
      out.push_back(c);
    }
    return out;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace pg::web
