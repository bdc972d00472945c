#!/usr/bin/env python3
"""The peer of `perfgate run --model aoti:...` on the GPU: the same Hugging Face model and static
cache (python/export_hf.py's wrapper) under plain torch.compile in Python, timed with CUDA events
per decode step, and once more through python/perfgate_bench.py's measure() to see what the
--exec helper adds. Waits for WAIT_FILE (if given) before timing, so that no compile on the host
disturbs it. Prints one JSON object."""
import json, os, statistics, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch, transformers
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM
from export_hf import PerfgateContract

cfg_path, P, G, reps, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), 3
wait_file = sys.argv[5] if len(sys.argv) > 5 else None
cfg = json.load(open(cfg_path)); mt = cfg.pop("model_type")
torch.manual_seed(0)
with torch.device("cuda"):
    model = transformers.AutoModelForCausalLM.from_config(
        transformers.AutoConfig.for_model(mt, **cfg), dtype=torch.bfloat16).eval()
model.generation_config.cache_implementation = "static"
wrapped = PerfgateContract(TorchExportableModuleForDecoderOnlyLM(
    model, batch_size=1, max_cache_len=1024, device=torch.device("cuda")).model).cuda()
prompt = torch.randint(cfg["vocab_size"], (1, P), device="cuda")
ppos = torch.arange(P, device="cuda")
tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
pos = torch.zeros(1, dtype=torch.long, device="cuda")
out = {}


def one_rep(f, ev):
    ev[0].record()
    logits = f(prompt, ppos)
    tok.copy_(logits[:, -1].argmax(-1, keepdim=True))
    ev[1].record()
    for i in range(1, G):
        pos.fill_(P + i - 1)
        logits = f(tok, pos)
        tok.copy_(logits[:, -1].argmax(-1, keepdim=True))
        ev[i + 1].record()


def time_variant(f, name):
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(G + 1)]
    tpot = []
    for r in range(warmup + reps):
        one_rep(f, ev)
        ev[-1].synchronize()
        if r >= warmup:
            tpot.append(ev[1].elapsed_time(ev[-1]) / (G - 1))
    m = statistics.median(tpot)
    out[name] = {"tpot_ms_median": m, "cv": statistics.stdev(tpot) / statistics.mean(tpot)}


with torch.no_grad():
    variants = {"torch.compile": torch.compile(wrapped),
                "torch.compile reduce-overhead": torch.compile(wrapped, mode="reduce-overhead")}
    for name, f in variants.items():
        t = time.time()
        for _ in range(3):
            one_rep(f, [torch.cuda.Event(enable_timing=True) for _ in range(G + 1)])
        torch.cuda.synchronize()
        out[name + " compile_s"] = round(time.time() - t, 1)
    while wait_file and not os.path.exists(wait_file):
        time.sleep(1)
    for name, f in variants.items():
        time_variant(f, name)
    # The same model through the --exec helper's timing loop (per-step events), then the plain
    # loop again: the helper's overhead is its median against the two plain medians around it.
    import perfgate_bench as pb
    c = pb.Cell({"batch_size": 1, "prompt_len": P, "gen_tokens": G, "warmup": warmup, "reps": reps,
                 "device": "cuda", "dtype": "bf16"})
    for name, f in variants.items():
        def prefill():
            tok.copy_(f(prompt, ppos)[:, -1].argmax(-1, keepdim=True))
        def decode_step(i):
            pos.fill_(P + i)
            tok.copy_(f(tok, pos)[:, -1].argmax(-1, keepdim=True))
        samples = pb.measure(c, prefill, decode_step)
        tp = [sum(d) / len(d) for _, d in samples]
        out["perfgate_bench " + name] = {"tpot_ms_median": statistics.median(tp),
                                         "cv": statistics.stdev(tp) / statistics.mean(tp)}
        time_variant(f, name + " (again)")
print(json.dumps(out, indent=1))
