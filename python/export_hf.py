#!/usr/bin/env python3
"""Export any Hugging Face causal LM as a perfgate AOTInductor package, through transformers'
own export wrapper with a static KV cache (transformers.integrations.executorch).

    # a checkpoint (a local folder or a hub id already in the cache)
    python3 python/export_hf.py --model meta-llama/Llama-3.2-1B --out out/llama-b{batch}.pt2 \
        --batch 1 --context 1024 --dtype bf16 --device cuda
    # random weights from a config, no download: a config.json, or inline JSON
    python3 python/export_hf.py --config '{"model_type": "llama", "hidden_size": 2048, ...}' ...

Writes PATH.pt2 and its sidecar PATH.json (see perfgate_export.py and docs/OWN_MODEL.md).
"""
import argparse
import json
import os
import sys

# From a checkout (python3 python/export_hf.py) perfgate_export.py is beside this file; from the
# wheel (perfgate-export-hf, python -m perfgate.export_hf) it is an installed module.
if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM  # noqa: E402

import perfgate_export as pe  # noqa: E402


class PerfgateContract(torch.nn.Module):
    """forward(tokens, positions) -> logits over transformers' static-cache wrapper: what the
    package's program does. The package itself is exported through transformers' own
    `export()` (strict tracing, kwargs input_ids and cache_position, which flatten to the same
    two inputs): the non-strict export of this wrapper fails to compile under transformers 5.17
    (a lifted cache counter mutated in place)."""

    def __init__(self, wrapped):
        super().__init__()
        self.wrapped = wrapped

    def forward(self, tokens, positions):
        return self.wrapped(input_ids=tokens, cache_position=positions)


def load_model(args):
    kwargs = {"attn_implementation": args.attn_implementation} if args.attn_implementation else {}
    if args.model:
        return transformers.AutoModelForCausalLM.from_pretrained(
            args.model, dtype=pe.DTYPES[args.dtype], **kwargs)
    text = args.config
    if os.path.isfile(text):
        with open(text) as f:
            text = f.read()
    cfg_dict = json.loads(text)
    model_type = cfg_dict.pop("model_type", "llama")
    config = transformers.AutoConfig.for_model(model_type, **cfg_dict)
    torch.manual_seed(args.seed)
    with torch.device(args.device):  # random weights made where they run: no host copy
        return transformers.AutoModelForCausalLM.from_config(
            config, dtype=pe.DTYPES[args.dtype], **kwargs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="a checkpoint: local folder or hub id (from_pretrained)")
    src.add_argument("--config", help="config.json path or inline JSON: random weights")
    ap.add_argument("--attn-implementation", help="e.g. sdpa or eager (transformers' choice if unset)")
    pe.common_arguments(ap)
    args = ap.parse_args()
    model = load_model(args).to(args.device).eval()
    model.generation_config.cache_implementation = "static"
    # transformers' wrapper picks its static (or hybrid) cache module; perfgate calls that one.
    exportable = TorchExportableModuleForDecoderOnlyLM(model, batch_size=args.batch,
                                                       max_cache_len=args.context,
                                                       device=torch.device(args.device))
    wrapped = exportable.model
    out, name = pe.resolved_out(args)
    if args.model and not args.name:
        name = args.model.rstrip("/").split("/")[-1]
    pe.export_and_package(PerfgateContract(wrapped).to(args.device), out=out, name=name,
                          batch=args.batch, context=args.context, dtype=args.dtype,
                          device=args.device,
                          exporter_versions={"transformers": transformers.__version__},
                          decode_program=args.decode_program, tuning_from=args.tuning_from,
                          inductor_configs=pe.inductor_configs(args),
                          export=lambda tokens, positions, T: exportable.export(
                              input_ids=tokens, cache_position=positions,
                              dynamic_shapes=None if T is None else
                              {"input_ids": {1: T}, "cache_position": {0: T}}))


if __name__ == "__main__":
    main()
