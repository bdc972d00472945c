"""Peer: Hugging Face transformers GPT-2 (random weights) under perfgate's protocol.

Manual prefill + decode loop with transformers' own KV cache, CUDA events around prefill and
around the whole decode, `--warmup` untimed repetitions, median over `--reps`. One JSON line per
cell on stdout. Run on a GPU machine:
    python3 bench/peers/hf_peer.py --models gpt2 --dtypes bf16,fp32 --batch-sizes 1,4,8,16 --seq-lens 64,256,512
"""
import argparse, json, statistics, sys

import torch
from transformers import GPT2Config, GPT2LMHeadModel

PRESETS = {"gpt2": dict(), "gpt2-medium": dict(n_layer=24, n_head=16, n_embd=1024),
           "gpt2-large": dict(n_layer=36, n_head=20, n_embd=1280),
           "gpt2-xl": dict(n_layer=48, n_head=25, n_embd=1600)}
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def ints(s):
    return [int(x) for x in s.split(",")]


def bench(model, bs, sl, gen, warm, reps):
    ids = torch.randint(0, 50257, (bs, sl), device="cuda")

    def one():
        s, m, e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        with torch.inference_mode():
            s.record()
            out = model(input_ids=ids, use_cache=True)
            past, nxt = out.past_key_values, out.logits[:, -1, :].argmax(-1, keepdim=True)
            m.record()
            for _ in range(gen - 1):
                out = model(input_ids=nxt, past_key_values=past, use_cache=True)
                past, nxt = out.past_key_values, out.logits[:, -1, :].argmax(-1, keepdim=True)
            e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(m), m.elapsed_time(e) / (gen - 1)

    for _ in range(warm):
        one()
    torch.cuda.reset_peak_memory_stats()
    pf, dc = zip(*[one() for _ in range(reps)])
    return dict(prefill_ms=statistics.median(pf), tpot_ms=statistics.median(dc),
                cv=statistics.pstdev(dc) / statistics.mean(dc),
                peak_alloc_bytes=torch.cuda.max_memory_allocated())


def bench_compiled_generate(model, bs, sl, gen, warm, reps):
    """transformers' generate() with a static cache, which makes generate() compile the decode
    forward itself (its auto-compile, CompileConfig's default mode). Wrapping model.forward in
    torch.compile by hand as well breaks on transformers 5.17 (cudagraph outputs overwritten).
    generate() gives no per-phase hook, so decode time = (T(gen tokens) - T(1 token)) / (gen-1)."""
    model.generation_config.cache_implementation = "static"
    ids = torch.randint(0, 50257, (bs, sl), device="cuda")
    kw = dict(do_sample=False, pad_token_id=0, eos_token_id=None)

    def timed(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.inference_mode():
            s.record()
            model.generate(ids, max_new_tokens=n, min_new_tokens=n, **kw)
            e.record()
        torch.cuda.synchronize()
        return s.elapsed_time(e)

    for _ in range(warm):
        timed(gen), timed(1)
    full = [timed(gen) for _ in range(reps)]
    first = [timed(1) for _ in range(reps)]
    tpot = [(f - statistics.median(first)) / (gen - 1) for f in full]
    return dict(prefill_ms=statistics.median(first), tpot_ms=statistics.median(tpot),
                cv=statistics.pstdev(tpot) / statistics.mean(tpot))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="gpt2")
    ap.add_argument("--dtypes", default="bf16")
    ap.add_argument("--batch-sizes", type=ints, default=[1, 4, 8, 16])
    ap.add_argument("--seq-lens", type=ints, default=[64, 256, 512])
    ap.add_argument("--gen-tokens", type=int, default=32)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--mode", choices=["eager", "compiled-generate"], default="eager")
    a = ap.parse_args()
    fn = bench if a.mode == "eager" else bench_compiled_generate
    torch.manual_seed(0)
    import transformers
    for name in a.models.split(","):
        for dt in a.dtypes.split(","):
            model = GPT2LMHeadModel(GPT2Config(**PRESETS[name])).to("cuda", DTYPES[dt]).eval()
            for bs in a.batch_sizes:
                for sl in a.seq_lens:
                    try:
                        r = fn(model, bs, sl, a.gen_tokens, a.warmup, a.reps)
                    except torch.OutOfMemoryError:
                        r = dict(status="oom")
                        torch.cuda.empty_cache()
                    r.update(peer="hf-" + a.mode, model=name, dtype=dt, batch_size=bs, seq_len=sl,
                             transformers=transformers.__version__, torch=torch.__version__)
                    print(json.dumps(r), flush=True)
            del model
            torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
