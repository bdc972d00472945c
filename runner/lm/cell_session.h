// The sessions behind lm::CellSession (runner/lm/measure.h): a built-in model's cell and an
// AOTInductor package's cell, held open between repetitions, and the one mapping of what LibTorch
// throws to an oom or error cell. Internal to runner/lm.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <memory>

#include "runner/lm/aoti_model.h"
#include "runner/lm/measure.h"
#include "runner/lm/model.h"

namespace pg::lm {

// Runs `body`; rethrows UsageError and CellFailure as they are, a LibTorch allocation failure
// as CellFailure oom, any other exception as CellFailure error (LibTorch's first line).
void as_cell_failure(const std::function<void()>& body);

// A cell of a built-in model `m` (which must outlive the session) on `device`, warmed up.
std::unique_ptr<CellSession> open_builtin_session(const Model& m, const CellKey& key,
                                                  const runner::MeasureOptions& opt,
                                                  const at::Device& device);
// A cell of the package `m` (which must outlive the session), warmed up.
std::unique_ptr<CellSession> open_aoti_session(AotiModel& m, const CellKey& key,
                                               const runner::MeasureOptions& opt,
                                               const at::Device& device);

}  // namespace pg::lm
