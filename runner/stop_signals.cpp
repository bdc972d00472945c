#include "runner/stop_signals.h"

#include <unistd.h>

namespace pg::runner {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void on_stop_signal(int) {
  g_stop_requested = 1;
  static const char msg[] =
      "\nperfgate: stopping after the current cell; the run is kept as incomplete "
      "(signal again to stop at once)\n";
  // write(2) is async-signal-safe; its result cannot be acted on here.
  [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
}

}  // namespace

// SA_RESETHAND makes a second signal fatal at once (the run then stays incomplete, as after
// kill -9).
StopSignals::StopSignals() {
  g_stop_requested = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &old_pipe_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGPIPE, &old_pipe_, nullptr);
}

bool stop_requested() { return g_stop_requested != 0; }

}  // namespace pg::runner
