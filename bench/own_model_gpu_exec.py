#!/usr/bin/env python3
"""A Hugging Face causal LM (random weights from a config JSON; by default the 1.1B Llama-style
bench/own_model/llama_1b.json) under torch.compile with transformers' static KV cache, benchmarked
for `perfgate run --exec` with python/perfgate_bench.py. The module is the one that
python/export_hf.py packages for `--model aoti:` (bench/own_model/hf_static.py), so the two paths
time the same model.

    perfgate run --exec "python3 bench/own_model_gpu_exec.py" --model llama-1.1b \
        --device cuda --dtype bf16 --cuda-graphs on ...
    python3 bench/own_model_gpu_exec.py --plain    # the same model timed without the helper

The cell's `cuda_graphs` axis picks the compile mode: on, mode="reduce-overhead" (CUDA graphs);
off, the default mode. OWN_MODEL_CONFIG names the config (a path relative to the working
directory, which under perfgate is the checkout being measured); its "context" is the static
cache's length. A commit that changes the config (more layers, a longer cache) changes the model.

`--plain` times each repetition's decode loop with one pair of CUDA events around all its steps
(no per-step instrumentation) and prints {"plain_decode_step_ms": [...]}, so the helper's
overhead is the difference of the two per-step means measured one after the other.
The cell (batch, prompt length, tokens, repetitions, dtype, seed) comes from perfgate, or from
PERFGATE_* variables when run by hand.
"""

import json
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "own_model"))
import hf_static  # noqa: E402  (puts python/ on the path)
import perfgate_bench as pb  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402


def main():
    plain = "--plain" in sys.argv[1:]
    c = pb.cell()
    cfg = hf_static.load_config(os.environ.get("OWN_MODEL_CONFIG", hf_static.DEFAULT_CONFIG))
    module, _, facts = hf_static.build(cfg, batch=c.batch_size, device=c.device, dtype=c.dtype,
                                       seed=c.seed)
    if c.prompt_len + c.gen_tokens > facts["context"]:
        raise ValueError("prompt_len + gen_tokens exceeds the static cache (context %d)"
                         % facts["context"])
    mode = "reduce-overhead" if c.cuda_graphs else "default"
    forward = torch.compile(module, mode=mode)
    g = torch.Generator().manual_seed(c.seed)
    prompt = torch.randint(facts["vocab"], (c.batch_size, c.prompt_len), generator=g).to(c.device)
    prefill_pos = torch.arange(c.prompt_len, device=c.device)
    tok = torch.zeros(c.batch_size, 1, dtype=torch.long, device=c.device)
    pos = torch.zeros(1, dtype=torch.long, device=c.device)

    @torch.no_grad()
    def prefill():
        tok.copy_(forward(prompt, prefill_pos)[:, -1].argmax(-1, keepdim=True))

    @torch.no_grad()
    def decode_step(i):
        pos.fill_(c.prompt_len + i)  # a device-side fill, read by the captured graph
        tok.copy_(forward(tok, pos)[:, -1].argmax(-1, keepdim=True))

    if plain:
        per_step = []
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for rep in range(c.warmup + c.reps):
            prefill()
            start.record()
            for i in range(c.gen_tokens - 1):
                decode_step(i)
            end.record()
            end.synchronize()
            if rep >= c.warmup:
                per_step.append(start.elapsed_time(end) / (c.gen_tokens - 1))
        os.write(pb._protocol_fd(), (json.dumps({"plain_decode_step_ms": per_step}) + "\n").encode())
        return
    pb.run(c, prefill, decode_step, engine="torch.compile(mode=%s)" % mode,
           versions={"transformers": transformers.__version__}, model_info=facts)


if __name__ == "__main__":
    t0 = time.time()
    main()
    print("own_model_gpu_exec: %.1f s" % (time.time() - t0), file=sys.stderr)
