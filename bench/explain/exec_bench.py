#!/usr/bin/env python3
"""bench/explain_gpu.sh's `--exec` benchmark: variant_model.py's module in eager PyTorch through
python/perfgate_bench.py, at the variant the measured commit's `explain_model.json` names
({"variant": ..., "config": {...}}, in the working directory: perfgate runs this in the checkout).

With the cell's cuda_graphs on, the decode step is one CUDA graph of the eager module, captured
once before the repetitions (static token and position tensors), so that a step's time is the
device time of its kernels rather than the host's launches, and every eager op stays its own
kernel. The item_sync variant reads the new token back with .item() after every step.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import variant_model as vm  # noqa: E402  (puts python/ on the path)
import perfgate_bench as pb  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402


@torch.no_grad()
def capture(module, prompt, prefill_pos, pos, prompt_len, step):
    """One decode step as a CUDA graph, after a prefill and two warm-up steps on a side stream."""
    module(prompt, prefill_pos)
    pos.fill_(prompt_len)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph


def main():
    c = pb.cell()
    with open("explain_model.json") as f:
        spec = json.load(f)
    variant = spec["variant"]
    module, _, facts = vm.build(spec["config"], variant, batch=c.batch_size, device=c.device,
                                dtype=c.dtype, seed=c.seed)
    if c.prompt_len + c.gen_tokens > facts["context"]:
        raise ValueError("prompt_len + gen_tokens exceeds the static cache (context %d)"
                         % facts["context"])
    torch.set_num_threads(int(os.environ.get("PERFGATE_CPU_THREADS", "1")))
    g = torch.Generator().manual_seed(c.seed)
    prompt = torch.randint(facts["vocab"], (c.batch_size, c.prompt_len), generator=g).to(c.device)
    prefill_pos = torch.arange(c.prompt_len, device=c.device)
    tok = torch.zeros(c.batch_size, 1, dtype=torch.long, device=c.device)
    pos = torch.zeros(1, dtype=torch.long, device=c.device)
    sync = variant == "item_sync"

    def step():
        tok.copy_(module(tok, pos)[:, -1].argmax(-1, keepdim=True))

    graph = None
    if c.cuda_graphs:
        try:
            graph = capture(module, prompt, prefill_pos, pos, c.prompt_len, step)
        except RuntimeError as e:  # then every step runs eager, and the engine's name says so
            print("exec_bench: decode could not be captured in a CUDA graph: %s" % e,
                  file=sys.stderr)
            torch.cuda.synchronize()

    @torch.no_grad()
    def prefill():
        tok.copy_(module(prompt, prefill_pos)[:, -1].argmax(-1, keepdim=True))

    @torch.no_grad()
    def decode_step(i):
        pos.fill_(c.prompt_len + i)
        if graph is not None:
            graph.replay()
        else:
            step()
        if sync:
            tok.view(-1)[0].item()

    pb.run(c, prefill, decode_step, engine="pytorch-eager" + ("+graph" if graph else ""),
           versions={"transformers": transformers.__version__}, model_info=facts)


if __name__ == "__main__":
    main()
