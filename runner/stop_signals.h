// SIGINT/SIGTERM during a sweep or an A/B run (`perfgate run`, `perfgate ab`): the first asks it to
// stop after the current cell, keeping what is stored (the run then stays incomplete); a second
// is fatal at once. SIGPIPE is ignored while it lasts, so that a closed stdout becomes a write
// error (exit 4) instead of a signal.
#pragma once
#include <csignal>

namespace pg::runner {

// Installs the handlers for its lifetime and restores the previous ones after.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {
  }, old_term_{}, old_pipe_{};
};

// True once a signal asked the current sweep to stop.
bool stop_requested();

}  // namespace pg::runner
