#!/usr/bin/env python3
"""A perfgate `--exec` benchmark for any Hugging Face causal LM, eager or under torch.compile.

The model runs through transformers' own static-cache wrapper
(transformers.integrations.executorch.TorchExportableModuleForDecoderOnlyLM, the module
export_hf.py exports), called with `input_ids` and `cache_position` only: the wrapper keeps its
cache and its call stable across transformers 5.x, where the model's own `forward` renamed its
cache argument. In a sweep file:

    exec = "${PYTHON:-python3} -m hf_bench --model ./my-checkpoint"             # eager
    exec = "${PYTHON:-python3} -m hf_bench --model ./my-checkpoint --compile"   # torch.compile
    exec = "${PYTHON:-python3} -m hf_bench --config perf/llama-tiny.json"       # random weights

In CI the action puts perfgate's python/ folder (this file and perfgate_bench.py) first on
PYTHONPATH; by hand, put it there yourself. Each cell builds the model once, then perfgate_bench
times `warmup` + `reps` repetitions of one prefill and `gen_tokens - 1` greedy decode steps.
"""
import argparse
import json
import os
import sys

import torch
import transformers
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

import perfgate_bench as pb

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def arguments(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="a checkpoint: local folder or hub id (from_pretrained)")
    src.add_argument("--config", help="config.json path or inline JSON: random weights")
    ap.add_argument("--compile", action="store_true", help="torch.compile the wrapper's forward")
    ap.add_argument("--compile-mode", default=None,
                    help="torch.compile mode (default: reduce-overhead on CUDA, default on CPU)")
    ap.add_argument("--compile-backend", default="inductor",
                    help="torch.compile backend (default inductor; aot_eager traces without "
                         "generating kernels, a quick check of the compiled path on a small CPU)")
    ap.add_argument("--attn-implementation", help="e.g. sdpa or eager (transformers' choice if unset)")
    return ap.parse_args(argv)


def load(args, cell):
    kwargs = {"attn_implementation": args.attn_implementation} if args.attn_implementation else {}
    dtype = DTYPES[cell.dtype]
    if args.model:
        return transformers.AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype, **kwargs)
    text = args.config
    if os.path.isfile(text):
        with open(text) as f:
            text = f.read()
    cfg = json.loads(text)
    config = transformers.AutoConfig.for_model(cfg.pop("model_type", "llama"), **cfg)
    torch.manual_seed(cell.seed)
    return transformers.AutoModelForCausalLM.from_config(config, dtype=dtype, **kwargs)


def main(argv):
    args = arguments(argv)
    cell = pb.cell()
    device = torch.device(cell.device)
    model = load(args, cell).to(device).eval()
    model.generation_config.cache_implementation = "static"  # what the wrapper requires
    context = cell.prompt_len + cell.gen_tokens
    wrapper = TorchExportableModuleForDecoderOnlyLM(model, batch_size=cell.batch_size,
                                                    max_cache_len=context, device=device)
    forward = wrapper.model.forward
    engine = "eager"
    if args.compile:
        mode = args.compile_mode or ("reduce-overhead" if device.type == "cuda" else "default")
        if args.compile_backend == "inductor":
            forward = torch.compile(forward, mode=mode)
            engine = f"torch.compile-{mode}"
        else:  # modes are inductor's; other backends take none
            forward = torch.compile(forward, backend=args.compile_backend)
            engine = f"torch.compile-{args.compile_backend}"
    vocab = model.config.vocab_size
    prompt = torch.tensor(pb.random_prompt(cell, vocab), device=device)
    positions = torch.arange(cell.prompt_len, device=device)
    state = {}

    @torch.inference_mode()
    def prefill():
        logits = forward(input_ids=prompt, cache_position=positions)
        state["next"] = logits[:, -1:].argmax(-1)

    @torch.inference_mode()
    def decode_step(i):
        pos = torch.tensor([cell.prompt_len + i], device=device)
        logits = forward(input_ids=state["next"], cache_position=pos)
        state["next"] = logits[:, -1:].argmax(-1)

    param_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    pb.run(cell, prefill, decode_step, engine=f"transformers-{engine}",
           model_info={"display_name": args.model or model.config.model_type,
                       "param_bytes": param_bytes, "vocab": vocab, "context": context})


if __name__ == "__main__":
    main(sys.argv[1:])
