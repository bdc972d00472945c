// The names of the triage states (web/views/alert_state.h).
#include "web/views/alert_state.h"

namespace pg::web {

const char* to_string(AlertState s) {
  switch (s) {
    case AlertState::open:
      return "open";
    case AlertState::acknowledged:
      return "acknowledged";
    case AlertState::dismissed:
      return "dismissed";
    case AlertState::fixed:
      return "fixed";
    case AlertState::superseded:
      return "superseded";
    case AlertState::closed:
      return "closed";
  }
  return "open";
}

}  // namespace pg::web
