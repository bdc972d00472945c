#!/usr/bin/env python3
"""Where a decode step's time goes, per GPU kernel, for the same 1.1B model under
torch.compile(mode="reduce-overhead") and as an AOTInductor package (both under CUDA graphs):

    kernel_breakdown.py compile CONFIG OUT.json [GO_FILE]   # compile, wait for GO_FILE, time, profile
    kernel_breakdown.py aoti PKG.pt2 OUT.json               # the package's "model" program
    kernel_breakdown.py aoti-static CONFIG OUT.json PKG.pt2 [GO_FILE]
        exports CONFIG's model at a static T = 1 (the decode program's shape, with its weights)
        into PKG (Inductor options from the JSON object in $AOTI_OPTIONS), waits for GO_FILE,
        then times and profiles it as `aoti` does

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


def kind(name):
    for prefix, k in (("triton", "triton"), ("nvjet", "cublas"), ("void cublas", "cublas"),
                      ("cudnn", "cudnn"), ("void cudnn", "cudnn"), ("Memcpy", "copy"),
                      ("Memset", "copy")):
        if name.startswith(prefix):
            return k
    return "other"


def gaps(trace_path, steps=10):
    """Idle GPU time before each kernel of the profiled steps (from the chrome trace): per step,
    summed by the kinds of the kernel before and after, and the kernels with most idle before
    them. Gaps over 200 µs (the host between steps) are counted apart."""
    with open(trace_path) as f:
        ev = [e for e in json.load(f)["traceEvents"]
              if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e]
    ev.sort(key=lambda e: e["ts"])
    pairs, before, long_gaps, total = {}, {}, [], 0.0
    for a, b in zip(ev, ev[1:]):
        gap = b["ts"] - (a["ts"] + a["dur"])
        if gap > 200:
            long_gaps.append(round(gap, 1))
            continue
        gap = max(gap, 0.0)
        total += gap
        key = kind(a["name"]) + " -> " + kind(b["name"])
        pairs[key] = pairs.get(key, 0.0) + gap / steps
        before[b["name"][:120]] = before.get(b["name"][:120], 0.0) + gap / steps
    top = sorted(before.items(), key=lambda kv: -kv[1])[:15]
    return {"idle_us_per_step": total / steps, "kernels_per_step": len(ev) / steps,
            "by_kinds": {k: round(v, 2) for k, v in sorted(pairs.items(), key=lambda kv: -kv[1])},
            "most_idle_before": [{"kernel": k, "us_per_step": round(v, 2)} for k, v in top],
            "gaps_over_200us": long_gaps}


def kernels(call, pos, res=None):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(10):
            pos.fill_(P + i)
            call()
        torch.cuda.synchronize()
    if res is not None:
        trace = "/tmp/kernel_breakdown_%d.json" % os.getpid()
        prof.export_chrome_trace(trace)
        res["gaps"] = gaps(trace)
    rows = []
    for e in prof.key_averages():
        t = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if t > 0:
            rows.append({"kernel": e.key[:160], "calls_per_step": e.count / 10,
                         "us_per_step": t / 10})
    rows.sort(key=lambda r: -r["us_per_step"])
    return rows[:40]


def wait_for(go):
    """Says it is compiled (GO.ready), then waits for GO: the caller times one process at a time."""
    if go:
        open(go + ".ready", "w").close()
        while not os.path.exists(go):
            time.sleep(0.5)


def export_static(cfg, path):
    """The model of hf_static at tokens [1, 1], positions [1] with no dynamic dimension, as
    python/export_hf.py exports its decode program but with the weights in the package."""
    from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM
    _, model, facts = hf_static.build(cfg)
    exportable = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1,
                                                       max_cache_len=facts["context"],
                                                       device=torch.device("cuda"))
    tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
    ep = exportable.export(input_ids=tok, cache_position=torch.zeros(1, dtype=torch.long,
                                                                     device="cuda"))
    options = json.loads(os.environ.get("AOTI_OPTIONS") or "{}")
    torch._inductor.aoti_compile_and_package(ep, package_path=path, inductor_configs=options)


def main():
    mode, out = sys.argv[1], sys.argv[3]
    res = {"mode": mode, "torch": torch.__version__,
           "caches_off": os.environ.get("TORCHINDUCTOR_FORCE_DISABLE_CACHES") == "1",
           "env": {k: v for k, v in os.environ.items()
                   if k.startswith(("TORCHINDUCTOR_", "CUDA_", "TORCH_"))}}
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
            wait_for(sys.argv[4] if len(sys.argv) > 4 else None)

            def call():
                tok.copy_(f(tok, pos)[:, -1].argmax(-1, keepdim=True))
        else:
            from torch._inductor.package import load_package
            path = sys.argv[2]
            if mode == "aoti-static":
                path = sys.argv[4]
                t0 = time.time()
                export_static(hf_static.load_config(sys.argv[2]), path)
                res["export_compile_s"] = round(time.time() - t0, 1)
                res["aoti_options"] = os.environ.get("AOTI_OPTIONS")
                wait_for(sys.argv[5] if len(sys.argv) > 5 else None)
            loader = load_package(path, run_single_threaded=True).loader

            def step():
                tok.copy_(loader.run([tok, pos])[0][:, -1].argmax(-1, keepdim=True))
            call = capture(step)
            res["eager_kernels"] = kernels(step, pos)
        res["graphs"] = tpot(call, pos)
        res["graphs_again"] = tpot(call, pos)
        res["kernels"] = kernels(call, pos, res)
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1)
    print(mode, sys.argv[2] if mode.startswith("aoti") else "",
          "caches_off" if res["caches_off"] else "", res["graphs"], res["graphs_again"],
          file=sys.stderr)


if __name__ == "__main__":
    main()
