// The seam between a sweep and what measures its cells: perfgate's own LibTorch models
// (CellRunner, runner/lm) or the user's benchmark program (`--exec`, runner/exec). LibTorch-free.
#pragma once
#include "core/run.h"
#include "runner/lm/measure.h"

namespace pg {

class CellMeasurer {
 public:
  virtual ~CellMeasurer() = default;
  // Reports oom / invalid / error as results; what still throws is stored as an `error` cell.
  virtual CellResult measure(const CellKey& key, const MeasureOptions& opt) = 0;
  // Fingerprint entries only the cells can tell (an external engine's name and versions). When
  // true, run_sweep writes the run row after the first cell, with fingerprint() merged in.
  virtual bool fingerprint_after_first_cell() const { return false; }
  virtual Environment fingerprint() const { return {}; }
};

// perfgate's own models, timed in-process by runner/lm.
class LibTorchMeasurer final : public CellMeasurer {
 public:
  CellResult measure(const CellKey& key, const MeasureOptions& opt) override {
    return runner_.run(key, opt);
  }

 private:
  CellRunner runner_;
};

}  // namespace pg
