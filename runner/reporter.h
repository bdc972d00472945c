// What a sweep tells the outside world while and after it runs (after Google Benchmark's
// reporters): one interface, several outputs — the progress on stderr, the table on stdout, and
// the files of --csv / --json. The sweep calls them in order; a reporter ignores what it does
// not need.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::runner {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void sweep_started(const std::vector<CellKey>& /*cells*/) {}
  virtual void cell_started(size_t /*index*/, const CellKey& /*key*/) {}
  virtual void cell_finished(size_t /*index*/, const CellResult& /*result*/, double /*seconds*/) {}
  // The run as it was stored (read back from the store), complete or not.
  virtual void sweep_finished(const Run& /*run*/) {}
};

class ReporterList : public Reporter {
 public:
  void add(std::unique_ptr<Reporter> r) { list_.push_back(std::move(r)); }
  void sweep_started(const std::vector<CellKey>& cells) override {
    for (auto& r : list_) r->sweep_started(cells);
  }
  void cell_started(size_t index, const CellKey& key) override {
    for (auto& r : list_) r->cell_started(index, key);
  }
  void cell_finished(size_t index, const CellResult& result, double seconds) override {
    for (auto& r : list_) r->cell_finished(index, result, seconds);
  }
  void sweep_finished(const Run& run) override {
    for (auto& r : list_) r->sweep_finished(run);
  }

 private:
  std::vector<std::unique_ptr<Reporter>> list_;
};

}  // namespace pg::runner
