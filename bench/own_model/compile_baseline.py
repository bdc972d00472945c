#!/usr/bin/env python3
"""The peer of `perfgate run --model aoti:...` on the GPU: the same Hugging Face model and static
cache (bench/own_model/hf_static.py, what python/export_hf.py packages) under plain torch.compile
in Python, timed with CUDA events per decode step, and once more through
python/perfgate_bench.py's measure() to see what the --exec helper adds.

    compile_baseline.py CONFIG P G REPS [WAIT_FILE]

Compiles first, then waits for WAIT_FILE (if given) before timing, so that no compile on the
host disturbs it. $INDUCTOR_CONFIG (KEY=VALUE, VALUE JSON) sets one Inductor option, as
python/export_hf.py's --inductor-config does for the package. Prints one JSON object."""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import hf_static  # noqa: E402
import perfgate_bench as pb  # noqa: E402  (python/, on the path through hf_static)

cfg_path, P, G, reps, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), 3
wait_file = sys.argv[5] if len(sys.argv) > 5 else None
device = os.environ.get("BASELINE_DEVICE", "cuda")
if os.environ.get("INDUCTOR_CONFIG"):
    import torch._inductor.config  # noqa: E402
    key, _, value = os.environ["INDUCTOR_CONFIG"].partition("=")
    torch._inductor.config.patch({key: json.loads(value)}).__enter__()
dtype = os.environ.get("BASELINE_DTYPE", "bf16")
cfg = hf_static.load_config(cfg_path)
wrapped, _, facts = hf_static.build(cfg, device=device, dtype=dtype)
cuda = device.startswith("cuda")
prompt = torch.randint(facts["vocab"], (1, P), device=device)
ppos = torch.arange(P, device=device)
tok = torch.zeros(1, 1, dtype=torch.long, device=device)
pos = torch.zeros(1, dtype=torch.long, device=device)
out = {"config": cfg_path, "context": facts["context"], "prompt_len": P, "gen_tokens": G,
       "reps": reps, "warmup": warmup, "torch": torch.__version__,
       "inductor_config": os.environ.get("INDUCTOR_CONFIG")}


class Clock:
    """CUDA events on the GPU, perf_counter on the CPU (the dry run)."""

    def __init__(self, n):
        self.ev = [torch.cuda.Event(enable_timing=True) for _ in range(n)] if cuda else [0.0] * n

    def mark(self, i):
        if cuda:
            self.ev[i].record()
        else:
            self.ev[i] = time.perf_counter() * 1e3

    def ms(self, a, b):
        if cuda:
            self.ev[b].synchronize()
            return self.ev[a].elapsed_time(self.ev[b])
        return self.ev[b] - self.ev[a]


def one_rep(f, clock):
    clock.mark(0)
    logits = f(prompt, ppos)
    tok.copy_(logits[:, -1].argmax(-1, keepdim=True))
    clock.mark(1)
    for i in range(1, G):
        pos.fill_(P + i - 1)
        logits = f(tok, pos)
        tok.copy_(logits[:, -1].argmax(-1, keepdim=True))
        clock.mark(i + 1)


def summary(tpot):
    return {"tpot_ms_median": statistics.median(tpot),
            "cv": statistics.stdev(tpot) / statistics.mean(tpot), "n": len(tpot)}


def time_variant(f, name):
    clock, tpot = Clock(G + 1), []
    for r in range(warmup + reps):
        one_rep(f, clock)
        if r >= warmup:
            tpot.append(clock.ms(1, G) / (G - 1))
    out[name] = summary(tpot)


with torch.no_grad():
    variants = {"torch.compile": torch.compile(wrapped),
                "torch.compile reduce-overhead": torch.compile(wrapped, mode="reduce-overhead")}
    for name, f in variants.items():
        t = time.time()
        for _ in range(3):
            one_rep(f, Clock(G + 1))
        if cuda:
            torch.cuda.synchronize()
        out[name + " compile_s"] = round(time.time() - t, 1)
    while wait_file and not os.path.exists(wait_file):
        time.sleep(1)
    for name, f in variants.items():
        time_variant(f, name)
    # The same model through the --exec helper's timing loop (per-step events), then the plain
    # loop again: the helper's overhead is its median against the two plain medians around it.
    c = pb.Cell({"batch_size": 1, "prompt_len": P, "gen_tokens": G, "warmup": warmup, "reps": reps,
                 "device": device, "dtype": dtype})
    for name, f in variants.items():
        def prefill():
            tok.copy_(f(prompt, ppos)[:, -1].argmax(-1, keepdim=True))

        def decode_step(i):
            pos.fill_(P + i)
            tok.copy_(f(tok, pos)[:, -1].argmax(-1, keepdim=True))
        samples = pb.measure(c, prefill, decode_step)
        out["perfgate_bench " + name] = summary([sum(d) / len(d) for _, d in samples])
        time_variant(f, name + " (again)")
print(json.dumps(out, indent=1))
