// Runs with profiles for the explanation suites (tests/app, tests/web): a tiny model of kLayers
// layers, two cells per run. A head (head = true) adds an unfused op per layer to the first cell
// (`new_op`, slower: a timing regression) and one .item() sync per step to the second (timing
// unchanged), as the runner would store them, with each step's span on the host's timeline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::testing::profiled {

inline constexpr int kLayers = 12, kGen = 8;

inline CellKey key(int seq) { return {"tiny", "fp32", 1, seq, kGen, true, "sdpa", false, "cpu"}; }

// A decode step as the runner profiles it: a layer's ops, n_layer times.
inline ProfileStep step(int index, bool extra_silu, bool item_sync,
                        const std::string& new_op = "aten::sigmoid") {
  ProfileStep s;
  s.step = index;
  auto add = [&](const std::string& name, int64_t count, double ms) {
    s.ops_by_name.push_back({ProfileOpKind::op, name, count, ms});
    s.ops += count;
  };
  add("aten::addmm", 4 * kLayers, 0.40);
  add("aten::layer_norm", 2 * kLayers, 0.05);
  add("aten::scaled_dot_product_attention", kLayers, 0.08);
  add("aten::mul", 2 * kLayers + (extra_silu ? kLayers : 0), extra_silu ? 0.09 : 0.03);
  if (extra_silu) add(new_op, kLayers, 0.07);
  if (item_sync) {
    add("aten::item", 1, 0.002);
    add("aten::_local_scalar_dense", 1, 0.001);
    s.syncs = 1;
  }
  s.alloc_bytes = 4096 * static_cast<int64_t>(s.ops);
  s.peak_bytes = 65536;
  // On the host's timeline: the ops' self time, and 0.2 ms between them (0.025 ms more per layer
  // where the head adds an op: the dispatcher and the model's code around it).
  double busy = 0;
  for (const ProfileOp& o : s.ops_by_name) busy += o.total_ms;
  s.busy_ms = busy;
  s.span_ms = busy + 0.2 + (extra_silu ? 0.025 * kLayers : 0);
  s.wall_ms = *s.span_ms + 0.05;
  return s;
}

inline CellResult cell(int seq, double tpot, uint32_t seed, bool silu, bool sync,
                       const std::string& new_op = "aten::sigmoid") {
  CellResult c;
  c.key = key(seq);
  for (int r = 0; r < 10; ++r) {
    const double t = tpot * (1 + 0.01 * ((seed * 7 + r * 13) % 5 - 2));
    c.samples.prefill_ms.push_back(5 * t);
    c.samples.decode_ms.push_back(std::vector<double>(kGen - 1, t));
  }
  c.metrics["tpot_ms"] = tpot;
  CellProfile p;
  p.profiler = "kineto";
  p.wall_ms = 12;
  for (int i = -1; i < kGen - 1; ++i) p.steps.push_back(step(i, silu, sync, new_op));
  c.profile = p;
  return c;
}

inline Run run(const std::string& sha, bool head, uint32_t seed,
               const std::string& new_op = "aten::sigmoid") {
  Run r;
  r.status = RunStatus::complete;
  r.started_at = "2026-01-01T00:00:00Z";
  r.finished_at = "2026-01-01T00:01:00Z";
  r.git.commit = sha;
  r.git.branch = "main";
  r.git.time = "2026-01-01T00:00:00Z";
  r.git.repo_path = "/synthetic";
  r.env = {{"device", "cpu"}, {"torch", "2.11.0"}, {"cpu", "test"}, {"threads", "1"}};
  r.cells.push_back(
      cell(16, head ? 1.5 : 1.0, seed, head, false, new_op));  // slower: an op per layer
  r.cells.push_back(cell(32, 1.0, seed + 1, false, head));     // same time, one sync
  return r;
}

}  // namespace pg::testing::profiled
