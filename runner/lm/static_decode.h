// The graph-friendly decode step: fixed shapes, its inputs (token, position) and its output in
// static device buffers, the position never read on the host. A CUDA cell captures run() once
// in a CUDA graph and replays it; a CPU cell (and the CPU tests) call run() itself, so the same
// step is tested without a GPU.
#pragma once
#include <ATen/ATen.h>

#include "runner/lm/model.h"

namespace pg::lm {

class StaticDecodeStep {
 public:
  // The cache must outlive the step; its batch is the step's batch.
  StaticDecodeStep(const Model& m, KVCache& cache, AttentionKind attention, int64_t batch);

  // One step: reads token and pos, writes the cache at pos and the argmax into out.
  void run();

  // Sets the position with a device-side fill (a kernel launch, no synchronisation).
  void set_position(int64_t pos) { pos_.fill_(pos); }
  const at::Tensor& token() const { return token_; }  // long [B, 1]
  const at::Tensor& pos() const { return pos_; }      // long [1]
  const at::Tensor& out() const { return out_; }      // long [B, 1]
  KVCache& cache() const { return cache_; }
  const DecodeWindow& window() const { return window_; }

 private:
  const Model& m_;
  KVCache& cache_;
  DecodeWindow window_;
  at::Tensor token_, pos_, out_;
};

}  // namespace pg::lm
