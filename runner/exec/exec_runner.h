// `perfgate run --exec CMD`: every cell is measured by running the user's benchmark command,
// which reads the cell (PERFGATE_* variables and a JSON object on stdin) and prints the samples
// in docs/PROTOCOL.md's JSON lines. LibTorch-free.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "runner/exec/exec_cell.h"
#include "runner/exec/exec_protocol.h"
#include "runner/measurer.h"

namespace pg::exec {

struct ExecSettings {
  std::string command;      // run as /bin/sh -c COMMAND
  std::string repo_dir;     // the checkout being measured: the command's working directory
  double timeout_s = 900;   // per cell
  std::string device_name;  // the GPU's name from the fingerprint (for MBU / MFU peaks)
};

// The user's benchmark as the sweep's measurer (runner/measurer.h): one run of the command a cell.
class ExecMeasurer final : public runner::Measurer {
 public:
  explicit ExecMeasurer(ExecSettings settings);
  CellResult measure(const CellKey& key, const runner::MeasureOptions& opt) override;
  bool fingerprint_after_first_cell() const override { return true; }
  // engine, engine.<package> = version, and engine.model = the first model's display name.
  Environment fingerprint() const override;

 private:
  ExecSettings settings_;
  std::optional<EngineInfo> engine_;  // from the first hello line; later ones must match
};

}  // namespace pg::exec
