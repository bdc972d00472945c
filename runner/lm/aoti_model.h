// An AOTInductor package (`aoti:PATH.pt2`) as a cell's model: loaded with LibTorch's
// AOTIModelPackageLoader, driven through the contract of docs/OWN_MODEL.md: one program
// forward(tokens int64[B, T], positions int64[T]) -> (logits [B, T, V], ...), whose KV cache is a
// buffer it updates in place. Prefill is T = P at positions 0..P-1; each decode step is T = 1,
// through the package's static T = 1 decode program when its sidecar names one (that program
// runs on the first program's weights and cache, handed to it at load).
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <optional>
#include <string>

#include "core/run.h"
#include "runner/lm/artifact.h"
#include "runner/lm/cost_model.h"
#include "runner/lm/timing.h"

namespace torch::inductor {
class AOTIModelPackageLoader;
}

namespace pg::lm {

class CudaGraph;

// Refuses (SettingError) what the package cannot run: a batch, dtype, device or length other than
// the one it was exported for, according to its sidecar.
void check_aoti_cell(const CellKey& key, const ArtifactFile& file);

// Why the decode program's logits for a step cannot stand in for the model program's logits
// of the same step (shape, or a difference beyond what two compilations of the same math in
// that dtype make), or nullopt. Waits for the device.
std::optional<std::string> decode_program_disagreement(const at::Tensor& via_model,
                                                       const at::Tensor& via_decode_program);

class AotiModel {
 public:
  AotiModel(const ArtifactFile& file, const at::Device& device);
  ~AotiModel();

  // Buffers for one cell: a random prompt from `seed`, and with cuda_graphs the decode call
  // captured once (throws RuntimeFailure with the reason if the package cannot be captured).
  void prepare(const CellKey& key, int64_t seed);
  // One repetition: mark, prefill, mark, then G - 1 decode steps, marking after each (or only
  // after the last when !mark_each_step). Never waits for the device.
  void run_repetition(StepClock& clock, bool mark_each_step);
  // Why the last repetition's logits cannot be trusted (shape, non-finite), or nullopt. Waits.
  std::optional<std::string> output_failure() const;

  // Sizes and FLOPs from the sidecar; fields it lacks are absent (see aoti_metrics_to_drop).
  CellCost cost(const CellKey& key) const;
  // Derived metrics that need a sidecar field the package lacks: reported as absent.
  std::vector<std::string> metrics_to_drop() const;

  const ModelFacts& facts() const { return file_.facts; }

 private:
  at::Tensor forward(const at::Tensor& tokens, const at::Tensor& positions);
  at::Tensor decode_forward(const at::Tensor& tokens, const at::Tensor& positions);
  void decode_step();
  void load_decode_program(c10::DeviceIndex index);
  std::optional<std::string> check_decode_program();

  ArtifactFile file_;
  at::Device device_;
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> decode_loader_;  // or null
  std::optional<std::string> decode_disagreement_;  // from prepare: makes the cell invalid
  CellKey key_;
  at::Tensor prompt_, prompt_positions_, token_, position_;
  at::Tensor prefill_logits_, step_logits_;
  std::unique_ptr<CudaGraph> graph_;
};

}  // namespace pg::lm
