#include "web/views/view_codec.h"

#include <cstdio>

#include "common/version.h"
#include "web/views/msgpack_reader.h"
#include "web/views/msgpack_writer.h"

namespace pg::web {

namespace {
constexpr int kFormat = 1;  // bump when SeriesView or its computation changes meaning
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
  w.str(to_string(v.status));
  w.uint(v.skipped_cells);
  return w.take();
}

std::optional<SeriesView> decode_view(std::string_view bytes, const store::SeriesInfo& info,
                                      Metric m, const SeriesRules& rules) {
  try {
    MsgpackReader r(bytes);
    if (r.array() != 6 || r.integer() != kFormat) return std::nullopt;
    SeriesView v;
    v.info = info;
    v.metric = m;
    v.rules = rules;
    v.points.resize(r.array());
    for (SeriesPoint& p : v.points) {
      if (r.array() != 11) return std::nullopt;
      p.commit = r.str(), p.subject = r.str(), p.time = r.str();
      p.run_ids.resize(r.array());
      for (int64_t& id : p.run_ids) id = r.integer();
      p.median = r.real();
      p.spread.min = r.real(), p.spread.q1 = r.real(), p.spread.q3 = r.real();
      p.spread.max = r.real(), p.spread.n = r.count();
      p.flag = r.str();
      if (p.run_ids.empty()) return std::nullopt;
    }
    v.changes.resize(r.array());
    for (SeriesChange& c : v.changes) {
      if (r.array() != 8) return std::nullopt;
      c.index = r.count(), c.commit = r.str();
      c.before = r.real(), c.after = r.real(), c.relative = r.real(), c.p_value = r.real();
      c.direction = r.str(), c.flagged = r.boolean();
      if (c.index >= v.points.size()) return std::nullopt;
    }
    if (!r.nil()) {
      if (r.array() != 5) return std::nullopt;
      LastCompare lc;
      lc.base = r.str(), lc.head = r.str(), lc.verdict = r.str();
      for (auto* d : {&lc.ratio, &lc.p_adjusted})
        if (!r.nil()) *d = r.real();
      v.last_compare = std::move(lc);
    }
    const auto status = parse_series_status(r.str());
    if (!status) return std::nullopt;
    v.status = *status;
    v.skipped_cells = r.count();
    if (!r.done()) return std::nullopt;
    return v;
  } catch (const MsgpackError&) {
    return std::nullopt;
  }
}

std::string change_points_cache_key(Metric m, const std::string& branch,
                                    const stats::ChangePointOptions& o) {
  char options[128];
  std::snprintf(options, sizeof options, "alpha=%.17g permutations=%d seed=%llu min_segment=%zu",
                o.alpha, o.permutations, static_cast<unsigned long long>(o.seed), o.min_segment);
  return std::string("changes v") + std::to_string(kFormat) + " " + kVersion + " " +
         metric_info(m).name + " " + options + " branch=" + branch;
}

std::string encode_change_points(const std::vector<double>& medians,
                                 const std::vector<stats::ChangePoint>& changes) {
  MsgpackWriter w;
  w.array(3);
  w.uint(kFormat);
  w.array(medians.size());
  for (double m : medians) w.real(m);
  w.array(changes.size());
  for (const stats::ChangePoint& c : changes) {
    w.array(4);
    w.uint(c.index), w.real(c.before), w.real(c.after), w.real(c.p_value);
  }
  return w.take();
}

std::optional<std::vector<stats::ChangePoint>> decode_change_points(
    std::string_view bytes, const std::vector<double>& medians) {
  try {
    MsgpackReader r(bytes);
    if (r.array() != 3 || r.integer() != kFormat) return std::nullopt;
    if (r.array() != medians.size()) return std::nullopt;
    for (double m : medians)
      if (r.real() != m) return std::nullopt;
    std::vector<stats::ChangePoint> out(r.array());
    for (stats::ChangePoint& c : out) {
      if (r.array() != 4) return std::nullopt;
      c.index = r.count(), c.before = r.real(), c.after = r.real(), c.p_value = r.real();
      if (c.index >= medians.size()) return std::nullopt;
    }
    if (!r.done()) return std::nullopt;
    return out;
  } catch (const MsgpackError&) {
    return std::nullopt;
  }
}

}  // namespace pg::web
