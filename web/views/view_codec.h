// A series view to bytes and back, for the view cache the store keeps (Store::cached_views): a
// restart of `perfgate serve` reads each series' view instead of recomputing it.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stats/changepoint.h"

#include "web/views/series_view.h"

namespace pg::web {

// The key of a view in the cache: what it is computed for (metric, branch, gate settings) and
// the format and perfgate version that computed it, so a newer perfgate never reads an older
// computation.
std::string view_cache_key(Metric m, const SeriesRules& rules);

std::string encode_view(const SeriesView& v);
// nullopt when the bytes are not a view of this format (then the caller recomputes).
std::optional<SeriesView> decode_view(std::string_view bytes, const store::SeriesInfo& info,
                                      Metric m, const SeriesRules& rules);

// The change points of a series' medians, kept beside its views: they depend on the medians and
// the change-point options only, not on the gate settings, so a start with other settings
// (--alpha, --min-effect) reuses them instead of running the permutation tests again.
std::string change_points_cache_key(Metric m, const std::string& branch,
                                    const stats::ChangePointOptions& options);
std::string encode_change_points(const std::vector<double>& medians,
                                 const std::vector<stats::ChangePoint>& changes);
// nullopt unless the bytes hold the change points of exactly these medians.
std::optional<std::vector<stats::ChangePoint>> decode_change_points(
    std::string_view bytes, const std::vector<double>& medians);

}  // namespace pg::web
