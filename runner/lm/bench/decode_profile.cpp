// Where a decode step's time goes, for docs/PERFORMANCE.md: not a test, a tool run on a GPU
// machine by bench/gpu_profile.sh.
//   lm_decode_profile MODEL [BATCH] [PROMPT] [graph|eager]
// prints, for one bf16 model on cuda:0 at batch B after a prompt of P tokens,
//  - the eager decode step's host time per ATen operator (RecordFunction callbacks on the
//    outermost operator calls; the callbacks' own cost inflates the total, so the step's wall
//    time without them is printed too);
//  - the CUDA-graph step's replay time with each decode-attention form.
// Its last act is one graph replay (masked attention, the default) or one eager step between
// cudaProfilerStart and Stop, so `ncu --profile-from-start off` profiles exactly its kernels.
#include <ATen/record_function.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "runner/lm/cuda_support.h"
#include "runner/lm/model.h"
#include "runner/lm/model_spec.h"
#include "runner/lm/static_decode.h"

namespace {

using namespace pg::lm;
using Clock = std::chrono::steady_clock;

struct OpTime {
  double us = 0;
  int64_t calls = 0;
};
std::map<std::string, OpTime> g_ops;
thread_local int t_depth = 0;

struct Started : at::ObserverContext {
  Clock::time_point t0 = Clock::now();
};

at::CallbackHandle observe_outermost_ops() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> {
            return t_depth++ == 0 ? std::make_unique<Started>() : nullptr;
          },
          [](const at::RecordFunction& fn, at::ObserverContext* ctx) {
            --t_depth;
            if (!ctx) return;
            auto& op = g_ops[fn.name()];
            op.us += std::chrono::duration<double, std::micro>(Clock::now() -
                                                               static_cast<Started*>(ctx)->t0)
                         .count();
            ++op.calls;
          })
          .scopes({at::RecordScope::FUNCTION}));
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: lm_decode_profile MODEL [BATCH] [PROMPT] [graph|eager]\n");
    return 2;
  }
  c10::InferenceMode inference;
  const std::string name = argv[1];
  const int64_t B = argc > 2 ? std::stol(argv[2]) : 1, P = argc > 3 ? std::stol(argv[3]) : 512;
  const std::string profiled = argc > 4 ? argv[4] : "graph";
  const int64_t steps = 32, max_len = P + steps;
  const at::Device gpu(at::kCUDA, 0);
  const auto m = random_model(resolve_model(name), at::kBFloat16, gpu, 0);
  const auto attention = AttentionKind::sdpa;
  auto stream = use_pool_stream(0);
  KVCache cache(m.cfg.n_layer, B, m.cfg.n_head, max_len, m.cfg.head_dim(), m.options());
  const auto prompt =
      at::randint(m.cfg.vocab, {B, P}, at::TensorOptions().dtype(at::kLong)).to(gpu);
  auto next = forward(m, prompt, 0, &cache, attention, true).argmax(-1);
  int64_t pos = P;
  // The steps cycle over the same positions P .. P + steps - 1, as perfgate's repetitions do: the
  // first sight of a key length costs SDPA's cuDNN backend a plan build (~0.9 ms a call on the
  // H200), which the warm-up pays here and perfgate's warm-up repetitions pay there.
  auto eager_steps = [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (pos == max_len) pos = P;
      next = forward(m, next, pos++, &cache, attention, true).argmax(-1);
    }
  };
  eager_steps(2 * steps);  // warm-up: allocator, cuBLAS handles, kernels and attention plans
  cuda_synchronize(0);

  auto t0 = Clock::now();
  eager_steps(steps);
  cuda_synchronize(0);
  const double eager_ms = ms_since(t0) / steps;

  auto handle = observe_outermost_ops();
  t0 = Clock::now();
  eager_steps(steps);
  cuda_synchronize(0);
  const double observed_ms = ms_since(t0) / steps;
  at::removeCallback(handle);

  std::printf("# %s bf16 B=%ld P=%ld, %s\n", name.c_str(), (long)B, (long)P,
              cuda_device_info(0).name.c_str());
  std::printf(
      "eager step: %.3f ms wall (host-bound when the GPU waits); with op callbacks %.3f ms\n",
      eager_ms, observed_ms);
  std::printf(
      "\n| operator (outermost) | calls / step | host us / step | us / call "
      "|\n|---|--:|--:|--:|\n");
  std::vector<std::pair<std::string, OpTime>> ops(g_ops.begin(), g_ops.end());
  std::sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.second.us > b.second.us; });
  double sum = 0;
  for (const auto& [op, t] : ops) {
    sum += t.us / steps;
    std::printf("| %s | %.1f | %.1f | %.2f |\n", op.c_str(), double(t.calls) / steps, t.us / steps,
                t.us / double(t.calls));
  }
  std::printf("| (all operators) | | %.1f | |\n", sum);
  std::printf("| (outside operators: our C++, the loop) | | %.1f | |\n", observed_ms * 1e3 - sum);

  std::unique_ptr<CudaGraph> graph;
  std::unique_ptr<StaticDecodeStep> step;
  for (const char* form : {"flash", "masked"}) {  // the default, masked, last: ncu profiles it
    setenv("PERFGATE_DECODE_ATTENTION", form, 1);
    graph.reset();
    step = std::make_unique<StaticDecodeStep>(m, cache, attention, B);
    step->token().copy_(next);
    step->set_position(P);  // the graph rewrites position P on every replay
    graph = capture_cuda_graph(0, [&] { step->run(); });
    for (int i = 0; i < 10; ++i) graph->replay();
    cuda_synchronize(0);
    const int replays = 200;
    t0 = Clock::now();
    for (int i = 0; i < replays; ++i) graph->replay();
    cuda_synchronize(0);
    std::printf("graph step (%s attention): %.4f ms per replay (%d replays, wall)\n",
                step->window().length_aware() ? "length-aware flash" : "masked",
                ms_since(t0) / replays, replays);
  }

  cuda_profiler(true);
  if (profiled == "eager")
    eager_steps(1);
  else
    graph->replay();
  cuda_synchronize(0);
  cuda_profiler(false);
  return 0;
}
