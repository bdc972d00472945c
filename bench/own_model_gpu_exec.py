#!/usr/bin/env python3
"""A ~1.2B Llama-style Hugging Face model (random weights, Llama-3.2-1B shapes) under
torch.compile with a static KV cache, benchmarked for `perfgate run --exec` with
python/perfgate_bench.py.

    perfgate run --exec "python3 bench/own_model_gpu_exec.py" --model llama-1b ...
    python3 bench/own_model_gpu_exec.py --plain    # the same model timed without the helper

Both modes compile `model.forward` with mode="reduce-overhead" (CUDA graphs) and fullgraph=True,
the transformers recipe for a static cache. `--plain` times each repetition's decode loop with
one pair of CUDA events around all its steps (no per-step instrumentation) and prints
{"plain_decode_step_ms": [...]} per repetition, so the helper's overhead is the difference of the
two per-step means measured one after the other on the same GPU.

To make a slower commit for a gate, change LAYERS below (16 -> 20 adds 25% of the layers).
The cell (batch, prompt length, tokens, repetitions, dtype, seed) comes from perfgate, or from
PERFGATE_* variables when run by hand.
"""

import json
import os
import sys
import time

LAYERS = 16

here = os.path.dirname(os.path.abspath(__file__))
for d in (here, os.path.join(here, "..", "python"), os.path.join(os.getcwd(), "python")):
    if os.path.exists(os.path.join(d, "perfgate_bench.py")):
        sys.path.insert(0, d)
        break
import perfgate_bench as pb  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, StaticCache  # noqa: E402


def build(c):
    # OWN_MODEL_SMOKE=1: a tiny model of the same family, to check the script on a CPU.
    small = os.environ.get("OWN_MODEL_SMOKE") == "1"
    cfg = LlamaConfig(hidden_size=64 if small else 2048, intermediate_size=128 if small else 8192,
                      num_hidden_layers=LAYERS, num_attention_heads=4 if small else 32,
                      num_key_value_heads=2 if small else 8, vocab_size=1000 if small else 128256,
                      tie_word_embeddings=True, rope_theta=500000.0,
                      max_position_embeddings=max(4096, c.prompt_len + c.gen_tokens))
    dtype = getattr(torch, c.torch_dtype_name)
    torch.manual_seed(c.seed)
    with torch.device(c.device):
        model = LlamaForCausalLM(cfg).to(dtype).eval()
    max_len = c.prompt_len + c.gen_tokens
    try:  # transformers 5: the batch size and device come from the first update
        cache = StaticCache(config=cfg, max_cache_len=max_len)
    except TypeError:  # transformers 4.x
        cache = StaticCache(config=cfg, max_batch_size=c.batch_size, max_cache_len=max_len,
                            device=c.device, dtype=dtype)
    return cfg, model, cache


def model_info(cfg, model, c):
    params = sum(p.numel() for p in model.parameters())
    elem = torch.finfo(getattr(torch, c.torch_dtype_name)).bits // 8
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    embed = cfg.vocab_size * cfg.hidden_size
    return {
        "display_name": "Llama-3.2-1B shapes, %d layers, random weights" % cfg.num_hidden_layers,
        "param_bytes": params * elem,
        # 2 FLOPs per matmul weight and token; the tied embedding counts once, as the lm_head.
        "flops_per_token": 2 * (params - embed) + 2 * embed,
        "kv_bytes_per_token": 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * head_dim * elem,
        "vocab": cfg.vocab_size,
        "context": cfg.max_position_embeddings,
    }


def main():
    plain = "--plain" in sys.argv[1:]
    c = pb.cell()
    cfg, model, cache = build(c)
    forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    g = torch.Generator().manual_seed(c.seed)
    prompt = torch.randint(cfg.vocab_size, (c.batch_size, c.prompt_len), generator=g).to(c.device)
    prefill_pos = torch.arange(c.prompt_len, device=c.device)
    step_pos = [torch.tensor([c.prompt_len + i], device=c.device) for i in range(c.gen_tokens)]
    state = {}

    mark_step = torch.compiler.cudagraph_mark_step_begin

    @torch.inference_mode()
    def prefill():
        cache.reset()
        mark_step()
        out = forward(input_ids=prompt, past_key_values=cache, cache_position=prefill_pos,
                      use_cache=True)
        state["tok"] = out.logits[:, -1:].argmax(-1)

    @torch.inference_mode()
    def decode_step(i):
        mark_step()
        out = forward(input_ids=state["tok"], past_key_values=cache, cache_position=step_pos[i],
                      use_cache=True)
        state["tok"] = out.logits[:, -1:].argmax(-1)

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
    pb.run(c, prefill, decode_step, engine="torch.compile(reduce-overhead)",
           versions={"transformers": transformers.__version__},
           model_info=model_info(cfg, model, c))


if __name__ == "__main__":
    t0 = time.time()
    main()
    print("own_model_gpu_exec: %.1f s" % (time.time() - t0), file=sys.stderr)
