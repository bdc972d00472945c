"""The model that every own-model GPU benchmark here times, built exactly as python/export_hf.py
builds what it packages: a Hugging Face causal LM from a config JSON with random weights (seeded),
behind transformers' static-cache export wrapper and perfgate's forward(tokens, positions)
contract. So the AOTInductor package, plain torch.compile and the --exec benchmark all run the
same module.

A config is a JSON object as for `transformers.AutoConfig.for_model` (with "model_type"), plus an
optional "context": the static cache's length (default 1024).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM  # noqa: E402

from export_hf import PerfgateContract  # noqa: E402
import perfgate_export as pe  # noqa: E402

DEFAULT_CONFIG = os.path.join(HERE, "llama_1b.json")


def load_config(path):
    with open(path) as f:
        return json.load(f)


def build_exportable(cfg, batch=1, device="cuda", dtype="bf16", seed=0, patch=None):
    """Returns (transformers' static-cache export wrapper, the HF model); `patch(model)`, when
    given, changes the model before it is wrapped (bench/explain/variant_model.py)."""
    cfg = dict(cfg)
    model_type = cfg.pop("model_type", "llama")
    context = int(cfg.pop("context", 1024))
    torch.manual_seed(seed)
    with torch.device(device):
        model = transformers.AutoModelForCausalLM.from_config(
            transformers.AutoConfig.for_model(model_type, **cfg), dtype=pe.DTYPES[dtype])
    model = model.to(device).eval()
    if patch is not None:
        patch(model)
    model.generation_config.cache_implementation = "static"
    exportable = TorchExportableModuleForDecoderOnlyLM(model, batch_size=batch,
                                                       max_cache_len=context,
                                                       device=torch.device(device))
    return exportable, model


def build(cfg, batch=1, device="cuda", dtype="bf16", seed=0, patch=None):
    """Returns (the contract module on `device`, the HF model, facts for model_info)."""
    exportable, model = build_exportable(cfg, batch, device, dtype, seed, patch)
    module = PerfgateContract(exportable.model).to(device).eval()
    return module, model, facts_of(model, cfg, dtype)


def facts_of(model, cfg, dtype):
    """perfgate_bench's model_info of the model `cfg` built."""
    model_type = cfg.get("model_type", "llama")
    context = int(cfg.get("context", 1024))
    c = model.config
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    elem = torch.finfo(pe.DTYPES[dtype]).bits // 8
    facts = {
        "display_name": "%s, %d layers, random weights, static cache %d" % (
            model_type, c.num_hidden_layers, context),
        "param_bytes": float(sum(p.numel() * p.element_size() for p in model.parameters())),
        "flops_per_token": pe.linear_flops_per_token(model),
        "kv_bytes_per_token": 2 * c.num_hidden_layers * c.num_key_value_heads * head_dim * elem,
        "vocab": c.vocab_size,
        "context": context,
    }
    return facts
