// A request's query parameters as the views take them: plain values, parsed strictly here (400
// for a malformed value, 404 for a branch no run names), so that no view reads a request.
#pragma once
#include <httplib.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/metrics.h"
#include "web/views/models.h"

namespace pg::web {

OverviewFilter parse_overview_filter(const httplib::Request& req);
Metric metric_param(const httplib::Request& req);  // ?metric=, tpot_ms by default, 400 if unknown
// ?branch=: a stored branch name (404 for one no run names), nullopt when absent.
std::optional<std::string> branch_param(App& app, const httplib::Request& req, uint64_t gen);
// The compare page's and API's gate settings and device (?alpha= ?min_effect= ?metrics=
// ?correction= ?device=); 400 for an alpha that is not a number.
CompareParams compare_params(const httplib::Request& req);

}  // namespace pg::web
