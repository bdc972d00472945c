#!/usr/bin/env python3
"""What python/perfgate_bench.py adds to the time it measures, on a CPU or a GPU.

The same decode loop of the example model (examples/own-model) is timed two ways, alternating
block by block so that drift falls on both alike:
  bare    one clock read before and after the whole loop of decode steps;
  helper  perfgate_bench.measure(): a clock read (CPU) or CUDA event (GPU) after every step.
The helper's overhead is median(helper per-step mean) / median(bare per-step mean) - 1.
Usage: helper_overhead.py [--device cuda] [--blocks 20] [--steps 64] [--batch 1]
"""

import argparse
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, "..", "python"), os.path.join(here, "..", "examples", "own-model")]
import torch  # noqa: E402

import perfgate_bench as pb  # noqa: E402
from model import TinyLM  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--device", default="cpu")
ap.add_argument("--blocks", type=int, default=20)
ap.add_argument("--steps", type=int, default=64)
ap.add_argument("--batch", type=int, default=1)
a = ap.parse_args()
torch.set_num_threads(1)
torch.manual_seed(0)
model = TinyLM().to(a.device).eval()
model.allocate_cache(a.batch, 16 + a.steps + 1)
tok = torch.zeros(a.batch, 1, dtype=torch.long, device=a.device)
prompt = torch.zeros(a.batch, 16, dtype=torch.long, device=a.device)
cuda = a.device.startswith("cuda")


@torch.inference_mode()
def prefill():
    model(prompt, 0)


@torch.inference_mode()
def step(i):
    model(tok, 16 + i)


def bare(reps):
    out = []
    for _ in range(reps):
        prefill()
        if cuda:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
        t0 = time.perf_counter_ns()
        for i in range(a.steps):
            step(i)
        if cuda:
            e.record()
            e.synchronize()
            out.append(s.elapsed_time(e) / a.steps)
        else:
            out.append((time.perf_counter_ns() - t0) / 1e6 / a.steps)
    return out


cell = pb.Cell({"batch_size": a.batch, "prompt_len": 16, "gen_tokens": a.steps + 1, "warmup": 0,
                "reps": 5, "device": a.device})
bare(3)
bare_means, helper_means = [], []
for _ in range(a.blocks):
    bare_means += bare(5)
    helper_means += [statistics.mean(d) for _, d in pb.measure(cell, prefill, step)]
b, h = statistics.median(bare_means), statistics.median(helper_means)
print("device %s, %d blocks x 5 repetitions x %d steps: bare %.4f ms/step, helper %.4f ms/step, "
      "overhead %+.2f%%" % (a.device, a.blocks, a.steps, b, h, 100 * (h / b - 1)))

# The helper's own cost per step, directly: the interval between two marks around an empty call
# is the loop, the call and one clock read (an upper bound of what it adds to a real step).
noop_cell = pb.Cell({"batch_size": 1, "prompt_len": 1, "gen_tokens": 1001, "warmup": 1,
                     "reps": 20, "device": a.device})
noop = statistics.median(statistics.median(d) for _, d in
                         pb.measure(noop_cell, lambda: None, lambda i: None))
print("helper's own cost per step (empty callables): %.2f us = %.3f%% of a %.4f ms step"
      % (noop * 1e3, 100 * noop / b, b))
