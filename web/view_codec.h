// A series view to bytes and back, for the view cache the store keeps (Store::cached_views): a
// restart of `perfgate serve` reads each series' view instead of recomputing it.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "web/series_view.h"

namespace pg::web {

// The key of a view in the cache: what it is computed for (metric, branch, gate settings) and
// the format and perfgate version that computed it, so a newer perfgate never reads an older
// computation.
std::string view_cache_key(Metric m, const SeriesRules& rules);

std::string encode_view(const SeriesView& v);
// nullopt when the bytes are not a view of this format (then the caller recomputes).
std::optional<SeriesView> decode_view(std::string_view bytes, const SeriesInfo& info, Metric m,
                                      const SeriesRules& rules);

}  // namespace pg::web
