"""Shared part of perfgate's reference exporters (export_hf.py, export_module.py).

Turns a module that follows perfgate's AOTInductor contract into a package plus its sidecar:

    forward(tokens: int64[B, T], positions: int64[T]) -> logits [B, T, V]

with the KV cache a registered buffer that forward updates in place at `positions`. Prefill is
T = P at positions 0..P-1, each decode step T = 1. T is a dynamic dimension (1..context-1), so
one package serves every prompt length; the batch is fixed at export (the cache's), so there is
one package per batch size (name them with `{batch}`: `aoti:out/model-b{batch}.pt2`).

The sidecar, PATH.json beside PATH.pt2, carries what perfgate cannot read from a compiled
program: the display name (the series key), dtype, device, batch, context, vocab, parameter
bytes, FLOPs and KV-cache bytes per token, a hash of the weights, and the exporter's versions.
docs/OWN_MODEL.md describes every field.
"""
import hashlib
import json
import re
import os
import platform
import sys
import time

import torch

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def weights_sha256(module):
    """SHA-256 over every parameter's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name, p in sorted(module.named_parameters(), key=lambda kv: kv[0]):
        t = p.detach().contiguous().cpu()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def linear_flops_per_token(module):
    """2 FLOPs per weight of every nn.Linear: the matmuls of one token, attention excluded."""
    return float(sum(2 * m.weight.numel() for m in module.modules() if isinstance(m, torch.nn.Linear)))


def changed_buffer_bytes(module, call):
    """Bytes of the buffers that `call` writes: the KV cache (torch.export keeps in-place writes
    in the graph until decompositions, so its signature does not list them)."""
    before = {n: b.detach().clone() for n, b in module.named_buffers()}
    result = call()
    # Caches are [batch, heads, length, dim]-like; scalar counters beside them are not cache.
    changed = sum(b.numel() * b.element_size() for n, b in module.named_buffers()
                  if b.dim() >= 3 and not torch.equal(before[n], b))
    return changed, result


def export_and_package(module, *, out, name, batch, context, dtype, device, exporter_versions,
                       extra_facts=None, inductor_configs=None, export=None):
    """Exports `module` (already on `device` in `dtype`), compiles the package, writes the
    sidecar. Returns the sidecar's dict. `export(tokens, positions, T)`, when given, makes the
    ExportedProgram instead of torch.export.export (its inputs must flatten to the same two)."""
    if not out.endswith(".pt2"):
        raise SystemExit(f"--out {out}: the package's name must end in .pt2")
    module.eval()
    t0 = time.time()
    tokens = torch.zeros(batch, 2, dtype=torch.long, device=device)
    positions = torch.arange(2, dtype=torch.long, device=device)
    T = torch.export.Dim("T", min=1, max=context - 1)
    with torch.no_grad():
        kv_bytes, logits = changed_buffer_bytes(
            module, lambda: module(torch.ones_like(tokens), positions))
        if logits.dim() != 3 or logits.shape[:2] != (batch, 2):
            raise SystemExit(f"forward(tokens, positions) returned shape {tuple(logits.shape)}, "
                             f"expected [{batch}, 2, vocab]")
        vocab = int(logits.shape[-1])
        if export is not None:
            exported = export(tokens, positions, T)
        else:
            exported = torch.export.export(module, (tokens, positions),
                                           dynamic_shapes=({1: T}, {0: T}), strict=False)
    t_export = time.time() - t0
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    torch._inductor.aoti_compile_and_package(exported, package_path=out,
                                             inductor_configs=inductor_configs or {})
    t_compile = time.time() - t0 - t_export
    facts = {
        "name": name,
        "dtype": dtype,
        "device": "cuda" if str(device).startswith("cuda") else "cpu",
        "batch_size": batch,
        "context": context,
        "vocab": vocab,
        "param_bytes": float(sum(p.numel() * p.element_size() for p in module.parameters())),
        "flops_per_token": linear_flops_per_token(module),
        "kv_bytes_per_token": kv_bytes / (batch * context) if kv_bytes else None,
        "weights_sha256": weights_sha256(module),
        "exporter": {"torch": torch.__version__, "python": platform.python_version(),
                     **exporter_versions},
        "export_seconds": round(t_export, 1),
        "compile_seconds": round(t_compile, 1),
    }
    facts.update(extra_facts or {})
    facts = {k: v for k, v in facts.items() if v is not None}
    with open(out[:-len(".pt2")] + ".json", "w") as f:
        json.dump(facts, f, indent=2, sort_keys=True)
        f.write("\n")
    print(f"{out}: exported in {t_export:.1f} s, compiled in {t_compile:.1f} s", file=sys.stderr)
    return facts


def common_arguments(parser):
    parser.add_argument("--out", required=True, help="the package to write, PATH.pt2 "
                        "(the sidecar goes to PATH.json); {batch} is replaced by --batch")
    parser.add_argument("--name", help="display name and series key (default: the file's stem)")
    parser.add_argument("--batch", type=int, default=1, help="batch size of the KV cache")
    parser.add_argument("--context", type=int, default=1024,
                        help="KV-cache length: the longest prompt + generated tokens")
    parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--seed", type=int, default=0, help="seed of random weights")


def resolved_out(args):
    out = args.out.replace("{batch}", str(args.batch))
    stem = os.path.basename(args.out)[:-len(".pt2")]
    name = args.name or re.sub(r"[-_.]?b?\{batch\}", "", stem) or stem
    return out, name
