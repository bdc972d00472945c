"""The model of bench/explain_gpu.sh at each of its commits: a Hugging Face Llama-style causal LM
with random weights (seeded) behind transformers' static-cache wrapper and perfgate's
forward(tokens, positions) contract, as python/export_hf.py packages it, changed by a variant:

  base      the model as configured
  extra_op  x * sigmoid(x) on every layer's attention output, before its o_proj: an elementwise op
            between two library kernels (SDPA and the o_proj GEMM), so that it stays its own kernel
            in eager code and in a compiled program alike (no neighbour it could fuse into)
  item_sync the base model; the benchmark reads one value back (`.item()`) after every decode
            step: a host-device sync and a device-to-host copy per step (bench/explain/exec_bench.py)

A config is a JSON object as for `transformers.AutoConfig.for_model` (with "model_type"), plus
"context", the static cache's length.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "own_model"))
import hf_static  # noqa: E402  (puts python/ on the path)
import torch  # noqa: E402

from export_hf import PerfgateContract  # noqa: E402

VARIANTS = ("base", "extra_op", "item_sync")


class XSigmoid(torch.nn.Module):
    """The extra op: x * sigmoid(x), in the input's dtype."""

    def forward(self, x):
        return x * torch.sigmoid(x)


def apply_variant(model, variant):
    if variant not in VARIANTS:
        raise ValueError("variant %r is not one of %s" % (variant, ", ".join(VARIANTS)))
    if variant == "extra_op":
        for layer in model.model.layers:
            layer.self_attn.o_proj = torch.nn.Sequential(XSigmoid(), layer.self_attn.o_proj)
    return model


load = hf_static.load_config


def build(cfg, variant, batch=1, device="cuda", dtype="bf16", seed=0):
    """(the contract module, transformers' exportable wrapper, facts for model_info): the model of
    bench/own_model/hf_static.py, changed by `variant` before it is wrapped."""
    exportable, model = hf_static.build_exportable(cfg, batch, device, dtype, seed,
                                                   patch=lambda m: apply_variant(m, variant))
    module = PerfgateContract(exportable.model).to(device).eval()
    return module, exportable, hf_static.facts_of(model, cfg, dtype)
