#include "runner/lm/model.h"

#include <ATen/Context.h>
#include <torch/version.h>

#include <cstdlib>

#include "common/errors.h"
#include "runner/lm/model_testing.h"

#if defined(PERFGATE_CALIBRATION_SLOWDOWN) && defined(PERFGATE_WITH_CUDA)
#include <ATen/cuda/Sleep.h>
#endif

namespace pg::lm {
namespace {

at::Tensor norm(const Model& m, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  const int64_t d = m.cfg.d_model;
  if (m.cfg.family == Family::gpt2) return at::layer_norm(x, {d}, w, b, m.cfg.norm_eps);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::rms_norm(x, {d}, w, m.cfg.norm_eps);
#else
  auto xf = x.to(at::kFloat);
  return (xf * at::rsqrt(xf.pow(2).mean(-1, true) + m.cfg.norm_eps)).to(x.scalar_type()) * w;
#endif
}

// Rows x [N, in] times w [out, in], plus b: one addmm, whose bias cuBLASLt fuses into the matrix
// product's epilogue.
at::Tensor dense(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return b.defined() ? at::addmm(b, x, w.t()) : at::mm(x, w.t());
}

// The residual update x += y w^T + b, in place. Folding the residual into the product instead
// (addmm_ with beta = 1, the bias then a kernel of its own) measured 0.5-2% slower on the H200:
// cuBLAS picks slower kernels for it (docs/PERFORMANCE.md).
void add_dense_(at::Tensor& x, const at::Tensor& y, const at::Tensor& w, const at::Tensor& b) {
  x.add_(dense(y, w, b));
}

// The MLP's hidden activations [N, d_ff], before its output projection.
at::Tensor mlp_hidden(const Model& m, const LayerWeights& w, const at::Tensor& x) {
  if (m.cfg.family == Family::gpt2) {
    auto h = dense(x, w.fc_w, w.fc_b);
    return at::gelu_(h, "tanh");
  }
  auto gate_up = dense(x, w.fc_w, w.fc_b).chunk(2, -1);
  return at::silu(gate_up[0]).mul_(gate_up[1]);
}

}  // namespace

at::Tensor apply_rope(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  auto pairs = x.unflatten(-1, {-1, 2});
  auto x0 = pairs.select(-1, 0), x1 = pairs.select(-1, 1);
  return at::stack({x0 * cos - x1 * sin, x0 * sin + x1 * cos}, -1).flatten(-2);
}

Model random_model(const ModelConfig& cfg, at::ScalarType dtype, const at::Device& device,
                   int64_t seed) {
  at::manual_seed(static_cast<uint64_t>(seed));
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  const auto opts = f32.dtype(dtype);
  const bool gpt2 = cfg.family == Family::gpt2;
  auto normal = [&](std::vector<int64_t> shape) {
    return at::randn(shape, f32).mul_(0.02).to(dtype);
  };
  auto ones = [&](int64_t n) { return at::ones({n}, opts); };
  auto bias = [&](int64_t n) { return gpt2 ? at::zeros({n}, opts) : at::Tensor(); };
  const int64_t d = cfg.d_model, ff = cfg.d_ff;
  const int64_t fc_out = gpt2 ? ff : 2 * ff;

  Model m;
  m.cfg = cfg;
  m.wte = normal({cfg.vocab, d});
  if (gpt2) m.wpe = normal({cfg.context, d});
  m.lnf_w = ones(d);
  m.lnf_b = bias(d);
  if (!gpt2) m.lm_head = normal({cfg.vocab, d});
  for (int64_t i = 0; i < cfg.n_layer; ++i) {
    m.layers.push_back({ones(d), bias(d), normal({3 * d, d}), bias(3 * d), normal({d, d}), bias(d),
                        ones(d), bias(d), normal({fc_out, d}), bias(fc_out), normal({d, ff}),
                        bias(d)});
  }
  init_rope(m);
  return m;
}

void init_rope(Model& m) {
  if (m.cfg.family != Family::cs336) return;
  const int64_t half = m.cfg.head_dim() / 2;
  auto f64 = at::TensorOptions().dtype(at::kDouble);
  auto inv_freq = at::pow(m.cfg.rope_theta, at::arange(0, half, f64) * (-2.0 / (2 * half)));
  auto angles = at::outer(at::arange(m.cfg.context, f64), inv_freq);  // [context, Dh / 2]
  m.rope_cos = angles.cos().to(m.options());
  m.rope_sin = angles.sin().to(m.options());
}

namespace {

#if defined(PERFGATE_CALIBRATION_SLOWDOWN)
// Calibration builds only (runner/CMakeLists.txt, docs/STATISTICS.md): a genuine, tunable
// slowdown of every forward step for the gate to catch. PERFGATE_CALIBRATION_EXTRA_MATMULS=N
// (read once; 0 or unset: none) adds N products of the embedded rows [B*T, D] with a [D, D]
// weight, results discarded; eager ATen runs every one of them.
void calibration_extra_work(const Model& m, const at::Tensor& x) {
  static const long n = [] {
    const char* v = std::getenv("PERFGATE_CALIBRATION_EXTRA_MATMULS");
    return v ? std::strtol(v, nullptr, 10) : 0L;
  }();
  if (n <= 0 || m.layers.empty()) return;
  const auto rows = x.reshape({-1, m.cfg.d_model});
  for (long i = 0; i < n; ++i) (void)at::mm(rows, m.layers[0].proj_w.t());
}

// The GPU's finer knob: PERFGATE_CALIBRATION_SLEEP_CYCLES=N (read once; 0 or unset: none) adds
// one kernel that spins N GPU clock cycles to every forward step on CUDA, prefill and decode
// steps alike, inside a CUDA graph too: a fixed genuine extra time per step (about N / SM clock
// plus one kernel's launch), sized for slowdowns well under 1% of a decode step.
void calibration_gpu_sleep(const at::Tensor& x) {
  static const long cycles = [] {
    const char* v = std::getenv("PERFGATE_CALIBRATION_SLEEP_CYCLES");
    return v ? std::strtol(v, nullptr, 10) : 0L;
  }();
  if (cycles <= 0 || !x.is_cuda()) return;
#if defined(PERFGATE_WITH_CUDA)
  at::cuda::sleep(cycles);
#endif
}
#endif

// The layers, the final norm and the head over embedded x [B, T, D]; `attend_layer` runs
// attention for layer l on q [B, H, T, Dh] and kv [2, B, H, T, Dh] (it writes the cache if there
// is one). Inside, activations are rows [B * T, D], so the linears are plain matrix products, and
// the residual stream is updated in place.
template <class AttendLayer>
at::Tensor run_layers(const Model& m, at::Tensor x, const at::Tensor& cos, const at::Tensor& sin,
                      bool last_only, AttendLayer&& attend_layer) {
  const int64_t B = x.size(0), T = x.size(1), D = m.cfg.d_model, H = m.cfg.n_head;
  x = x.reshape({B * T, D});
  for (size_t l = 0; l < m.layers.size(); ++l) {
    const auto& w = m.layers[l];
    auto qkv = dense(norm(m, x, w.ln1_w, w.ln1_b), w.qkv_w, w.qkv_b)
                   .view({B, T, 3, H, D / H})
                   .permute({2, 0, 3, 1, 4});  // [3, B, H, T, Dh]
    // One rotation for q and k together halves RoPE's small kernels.
    if (cos.defined())
      qkv = at::cat({apply_rope(qkv.narrow(0, 0, 2), cos, sin), qkv.narrow(0, 2, 1)});
    auto y = attend_layer(static_cast<int64_t>(l), qkv[0], qkv.narrow(0, 1, 2))
                 .transpose(1, 2)
                 .reshape({B * T, D});
    add_dense_(x, y, w.proj_w, w.proj_b);
    add_dense_(x, mlp_hidden(m, w, norm(m, x, w.ln2_w, w.ln2_b)), w.fc2_w, w.fc2_b);
    if (&testing::after_layer) testing::after_layer(x);  // null outside test binaries
#if defined(PERFGATE_EXTRA_COPY_EVERY) && PERFGATE_EXTRA_COPY_EVERY > 0
    // Calibration builds only (runner/CMakeLists.txt): one extra copy kernel, a genuine slowdown.
    if (l % PERFGATE_EXTRA_COPY_EVERY == 0) x = x.clone();
#endif
  }
  x = x.view({B, T, D});
  if (last_only) x = x.narrow(1, T - 1, 1);
  return at::linear(norm(m, x, m.lnf_w, m.lnf_b), m.head());
}

}  // namespace

at::Tensor forward(const Model& m, const at::Tensor& tokens, int64_t pos, KVCache* cache,
                   AttentionKind attention, bool last_only) {
  const auto& cfg = m.cfg;
  const int64_t T = tokens.size(1);
  if (!cache && pos != 0) throw RuntimeFailure("forward without a KV cache must start at 0");
  if (pos + T > cfg.context)
    throw RuntimeFailure("sequence of " + std::to_string(pos + T) + " tokens exceeds context " +
                         std::to_string(cfg.context));
  auto x = at::embedding(m.wte, tokens);
  at::Tensor cos, sin;
  if (cfg.family == Family::gpt2) {
    x = x + m.wpe.narrow(0, pos, T);
  } else {
    cos = m.rope_cos.narrow(0, pos, T);
    sin = m.rope_sin.narrow(0, pos, T);
  }
  const auto mask = causal_mask(T, pos + T, attention, m.options());
#if defined(PERFGATE_CALIBRATION_SLOWDOWN)
  calibration_extra_work(m, x);
  calibration_gpu_sleep(x);
#endif
  return run_layers(m, x, cos, sin, last_only,
                    [&](int64_t l, const at::Tensor& q, const at::Tensor& kv) {
                      if (!cache) return attend(q, kv[0], kv[1], mask, attention);
                      auto [k, v] = cache->update(l, pos, kv);
                      return attend(q, k, v, mask, attention);
                    });
}

at::Tensor forward_static_step(const Model& m, const at::Tensor& token, const at::Tensor& pos,
                               KVCache& cache, const DecodeWindow& window) {
  auto x = at::embedding(m.wte, token);
  at::Tensor cos, sin;
  if (m.cfg.family == Family::gpt2) {
    x = x + m.wpe.index_select(0, pos);
  } else {
    cos = m.rope_cos.index_select(0, pos);
    sin = m.rope_sin.index_select(0, pos);
  }
#if defined(PERFGATE_CALIBRATION_SLOWDOWN)
  calibration_gpu_sleep(x);
#endif
  return run_layers(m, x, cos, sin, true,
                    [&](int64_t l, const at::Tensor& q, const at::Tensor& kv) {
                      auto [k, v] = cache.update_at(l, pos, kv);
                      return window.attend(q, k, v);
                    });
}

}  // namespace pg::lm
