// The names and small texts of a series that every view model shows (the overview, the trend, the
// regressions and their groups): below both web/views/models.h and web/views/triage.h, which
// include it instead of each other.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/run.h"
#include "store/store.h"

namespace pg::web {

// "model · cell label · device", as lists and alerts name a series.
std::string series_name(const store::SeriesInfo& s);
// The device a series ran on as people name it: the environment's device name, else the key's.
std::string group_device(const store::SeriesInfo& s);
// The comparable environment fields that are set, "H200 · driver 550 · cuda 12.4".
std::string env_text(const Environment& env);
// The series still being computed, as the partial answers list them: id, key, environment.
nlohmann::json computing_json(const std::vector<store::SeriesInfo>& series);
// Seconds since the epoch of a stored ISO 8601 time; 0 when malformed (sorts first).
int64_t time_key(const std::string& iso);

}  // namespace pg::web
