#include "runner/lm/placement.h"

#include <random>

#include "runner/lm/cuda_support.h"

namespace pg::lm {
namespace {

// Every weight of the model in a new allocation, the old ones freed when the last copy goes.
void move_weights(Model& m) {
  auto renew = [](at::Tensor& t) {
    if (t.defined()) t = t.clone();
  };
  for (at::Tensor* t : {&m.wte, &m.wpe, &m.lnf_w, &m.lnf_b, &m.lm_head, &m.rope_cos, &m.rope_sin})
    renew(*t);
  for (LayerWeights& l : m.layers)
    for (at::Tensor* t : {&l.ln1_w, &l.ln1_b, &l.qkv_w, &l.qkv_b, &l.proj_w, &l.proj_b, &l.ln2_w,
                          &l.ln2_b, &l.fc_w, &l.fc_b, &l.fc2_w, &l.fc2_b})
      renew(*t);
}

}  // namespace

void DevicePlacement::place(uint64_t seed, const at::Device& device, Model* model) {
  release();
  if (!device.is_cuda()) return;
  cuda_empty_cache();  // fresh segments from the driver, not the last cell's blocks again
  std::mt19937_64 draw(seed);
  const int64_t pages = static_cast<int64_t>(draw() % 64),
                blocks = static_cast<int64_t>(draw() % 2048);
  const int64_t before = cuda_allocated_now(device.index());
  const auto bytes = at::TensorOptions().dtype(at::kByte).device(device);
  if (pages > 0) spacer_.push_back(at::empty({pages << 21}, bytes));
  if (blocks > 0) spacer_.push_back(at::empty({blocks << 9}, bytes));
  spacer_bytes_ = cuda_allocated_now(device.index()) - before;
  if (model) {
    move_weights(*model);
    cuda_empty_cache();  // the old weights' segments go back to the driver
  }
}

}  // namespace pg::lm
