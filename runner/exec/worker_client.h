// The perfgate end of one worker of protocol 3 (docs/PROTOCOL.md, "Version 3: worker mode"): a
// benchmark started once per cell and side of `perfgate ab`, asked for one timed repetition at a
// time, so that the A/B driver can alternate the two sides' repetitions. A failure of the
// benchmark (a bad line, a crash, a hang, its own oom / error line) never throws: it ends the
// worker and is kept as the cell's status and inert reason for that side, worded as ExecMeasurer
// words them. LibTorch-free.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/profile.h"
#include "core/run.h"
#include "runner/exec/exec_protocol.h"
#include "runner/measurer.h"

namespace pg::exec {

class ChildProcess;

struct WorkerSpec {
  std::string command;  // run as /bin/sh -c COMMAND
  std::string cwd;      // the side's checkout: the working directory and PERFGATE_REPO
  // Per phase: the start (hello, model load and warm-up until `ready`), then each request's answer
  // (a repetition; the end with its profile, and the exit after it). Past it the process group is
  // killed and the cell is `error` for this side.
  std::chrono::milliseconds timeout{900'000};
  // Added to the worker's environment after the cell's variables (PERFGATE_WORKER_COMMAND).
  std::vector<std::pair<std::string, std::string>> env;
};

// One timed repetition as the worker reported it.
struct RepSample {
  double prefill_ms = 0;
  std::vector<double> decode_ms;  // gen_tokens - 1 steps
};

class WorkerClient {
 public:
  // Starts the command for one cell (the worker's environment and first stdin line), reads its
  // hello and waits for `ready`. opt: warmup, reps (the most repetitions that will be asked
  // for), seed and profile, as for a one-shot cell.
  WorkerClient(const WorkerSpec& spec, const CellKey& key, const runner::MeasureOptions& opt);
  // The same for the next cell in a worker that finished its last one and said it takes more
  // (hello's "cells": "many"; release() handed it back): the cell line goes to its stdin.
  WorkerClient(std::unique_ptr<ChildProcess> worker, const WorkerSpec& spec, const CellKey& key,
               const runner::MeasureOptions& opt);
  ~WorkerClient();  // kills the process group if it is still running
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Started and ready, no failure so far, and not finished.
  bool ok() const;
  // From the hello line (also when the cell failed later).
  const std::optional<EngineInfo>& engine() const;

  // One timed repetition, the next in order (at most opt.reps); nullopt when the worker failed
  // (failure() says why) or was not ok().
  std::optional<RepSample> repetition();
  // Every repetition received so far, in order (also after a failure).
  const CellSamples& samples() const;

  // Asks for the end: the profile (when opt.profile; run after the timed repetitions) and
  // peak_alloc_bytes; then the process must exit with status 0. nullopt when it failed.
  struct End {
    std::optional<double> peak_alloc_bytes;
    std::optional<CellProfile> profile;
  };
  std::optional<End> finish();

  // After a successful finish() of a worker that takes more cells: the running worker, for the
  // next cell's WorkerClient; nullptr otherwise (the process is gone or is killed with this).
  std::unique_ptr<ChildProcess> release();

  // The cell's failure for this side, once there is one: oom or error, and an inert reason with
  // the tail of the worker's stderr.
  std::optional<std::pair<CellStatus, std::string>> failure() const;

 private:
  void await_ready();
  bool await(const std::function<bool()>& answered, const std::string& waiting_for,
             bool until_exit = false);
  void drain_unasked();
  void fail(CellStatus status, const std::string& reason);

  WorkerSpec spec_;
  int max_reps_;
  ProtocolReader reader_;
  std::unique_ptr<ChildProcess> child_;
  std::optional<std::pair<CellStatus, std::string>> failure_;
  bool ready_ = false, finished_ = false;
};

}  // namespace pg::exec
