// An alert's triage state (docs/WEB.md, "Regressions"): open until someone acts; acknowledged is
// still open, but owned; dismissed and fixed close it; superseded (a gate's alert only) when a
// later gate of the same ref passed; closed (an alert group only) when its members' closed states
// differ. The names are the API's and the pages' (JSON "state", CSS state-NAME).
#pragma once

namespace pg::web {

enum class AlertState { open, acknowledged, dismissed, fixed, superseded, closed };

const char* to_string(AlertState s);
inline bool is_open(AlertState s) { return s == AlertState::open || s == AlertState::acknowledged; }

}  // namespace pg::web
