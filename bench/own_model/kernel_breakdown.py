#!/usr/bin/env python3
"""Where a decode step's time goes, per GPU kernel, for the same 1.1B model under
torch.compile(mode="reduce-overhead") and as an AOTInductor package (both under CUDA graphs):

    kernel_breakdown.py compile CONFIG OUT.json [GO_FILE]   # compile, wait for GO_FILE, time, profile
    kernel_breakdown.py aoti PKG.pt2 OUT.json               # the package's "model" program

Times G - 1 = 31 graph replays per repetition, 20 repetitions after 3 warm-up ones (CUDA events),
then profiles 10 decode steps with torch.profiler and writes the kernels by total GPU time. The
model is bench/own_model/hf_static.py's (what python/export_hf.py packages)."""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_static  # noqa: E402
import torch  # noqa: E402

P, G, REPS = 128, 32, 20


def tpot(call, pos, P=P, G=G, reps=REPS):
    """Median ms per decode step (and CV) over `reps` repetitions of G - 1 calls, after 3."""
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    per_step = []
    for r in range(3 + reps):
        ev[0].record()
        for i in range(1, G):
            pos.fill_(P + i - 1)
            call()
        ev[1].record()
        ev[1].synchronize()
        if r >= 3:
            per_step.append(ev[0].elapsed_time(ev[1]) / (G - 1))
    return {"tpot_ms_median": statistics.median(per_step),
            "cv": statistics.stdev(per_step) / statistics.mean(per_step)}


def capture(step):
    """`step` captured in a CUDA graph after three warm-up calls on a side stream: its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    return g.replay


def kernels(call, pos):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(10):
            pos.fill_(P + i)
            call()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if t > 0:
            rows.append({"kernel": e.key[:160], "calls_per_step": e.count / 10,
                         "us_per_step": t / 10})
    rows.sort(key=lambda r: -r["us_per_step"])
    return rows[:40]


def main():
    mode, out = sys.argv[1], sys.argv[3]
    res = {"mode": mode, "torch": torch.__version__,
           "caches_off": os.environ.get("TORCHINDUCTOR_FORCE_DISABLE_CACHES") == "1"}
    tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
    pos = torch.full((1,), P, dtype=torch.long, device="cuda")
    with torch.no_grad():
        if mode == "compile":
            module, _, facts = hf_static.build(hf_static.load_config(sys.argv[2]))
            f = torch.compile(module, mode="reduce-overhead")
            prompt = torch.randint(facts["vocab"], (1, P), device="cuda")
            t0 = time.time()
            for _ in range(3):
                tok.copy_(f(prompt, torch.arange(P, device="cuda"))[:, -1].argmax(-1, keepdim=True))
                for i in range(4):
                    pos.fill_(P + i)
                    tok.copy_(f(tok, pos)[:, -1].argmax(-1, keepdim=True))
            torch.cuda.synchronize()
            res["compile_s"] = round(time.time() - t0, 1)
            go = sys.argv[4] if len(sys.argv) > 4 else None
            while go and not os.path.exists(go):
                time.sleep(0.5)

            def call():
                tok.copy_(f(tok, pos)[:, -1].argmax(-1, keepdim=True))
        else:
            from torch._inductor.package import load_package
            loader = load_package(sys.argv[2], run_single_threaded=True).loader

            def step():
                tok.copy_(loader.run([tok, pos])[0][:, -1].argmax(-1, keepdim=True))
            call = capture(step)
            res["eager_kernels"] = kernels(step, pos)
        res["graphs"] = tpot(call, pos)
        res["graphs_again"] = tpot(call, pos)
        res["kernels"] = kernels(call, pos)
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1)
    print(mode, sys.argv[2] if mode == "aoti" else "",
          "caches_off" if res["caches_off"] else "", res["graphs"], res["graphs_again"],
          file=sys.stderr)


if __name__ == "__main__":
    main()
