// Seeded random placement of a cell's device memory, for A/B runs (docs/AB.md, "Placement").
// Where a cell's weights, KV cache and graph pool land in device memory changes its speed by a
// few tenths of a percent, and two worker processes that allocate the same way land differently
// but reproducibly: an A/A pair of workers then shows the same per-cell "difference" gate after
// gate. Drawing the placement at random for every opening of a cell turns that bias into noise
// that the paired test's unit, the A/B run, replicates (Curtsinger and Berger, "Stabilizer",
// ASPLOS 2013, randomize layout for the same reason).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "runner/lm/model.h"

namespace pg::lm {

class DevicePlacement {
 public:
  // Releases the previous spacer and the allocator's cached blocks, then holds a spacer of a
  // size drawn from `seed` (0-63 blocks of 2 MiB and 0-2047 of 512 bytes) and, when `model` is
  // given, moves its weights into new allocations after the spacer. On a CPU device: nothing.
  void place(uint64_t seed, const at::Device& device, Model* model);
  void release() {
    spacer_.clear();
    spacer_bytes_ = 0;
  }
  // The allocator's bytes the spacer holds: in every memory peak read while it is held, and
  // subtracted from it, so the cell's memory metric does not depend on the draw.
  int64_t spacer_bytes() const { return spacer_bytes_; }

 private:
  std::vector<at::Tensor> spacer_;
  int64_t spacer_bytes_ = 0;
};

}  // namespace pg::lm
