// Progress of a sweep on stderr. On a terminal: one line redrawn with \r — a bar, cells done of
// total, the current cell and the ETA. Otherwise (CI logs, files): one plain line per finished
// cell. `--quiet` installs no ProgressReporter at all.
#pragma once
#include <chrono>
#include <cstdio>

#include "runner/reporter.h"

namespace pg::runner {

class ProgressReporter : public Reporter {
 public:
  // `terminal`: draw the redrawn bar (normally isatty(fileno(out))).
  ProgressReporter(std::FILE* out, bool terminal);
  void sweep_started(const std::vector<CellKey>& cells) override;
  void cell_started(size_t index, const CellKey& key) override;
  void cell_finished(size_t index, const CellResult& result, double seconds) override;
  void sweep_finished(const Run& run) override;

  // Seconds left, from the time the finished cells took scaled by the work left (tokens of the
  // remaining cells); negative while nothing has finished yet.
  double eta_seconds() const;

 private:
  void draw_bar(const CellKey& current);
  std::FILE* out_;
  bool terminal_;
  std::vector<double> weight_;  // relative cost of each cell
  double total_weight_ = 0, done_weight_ = 0;
  size_t done_ = 0;
  double busy_seconds_ = 0;  // time spent in finished cells
  std::chrono::steady_clock::time_point started_;
};

}  // namespace pg::runner
