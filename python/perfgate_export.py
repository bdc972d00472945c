"""Shared part of perfgate's reference exporters (export_hf.py, export_module.py).

Turns a module that follows perfgate's AOTInductor contract into a package plus its sidecar:

    forward(tokens: int64[B, T], positions: int64[T]) -> logits [B, T, V]

with the KV cache a registered buffer that forward updates in place at `positions`. Prefill is
T = P at positions 0..P-1, each decode step T = 1. T is a dynamic dimension (1..context-1), so
one package serves every prompt length; the batch is fixed at export (the cache's), so there is
one package per batch size (name them with `{batch}`: `aoti:out/model-b{batch}.pt2`).

The package holds that program as "model" and, unless --no-decode-program, a second program
"decode": the same forward exported at a static T = 1, the shape torch.compile specialises a
decode step on. It is compiled without weights of its own; perfgate hands it the "model"
program's weights and KV cache (docs/OWN_MODEL_AOTI.md, "The decode program").

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

import perfgate_tuning as tuning

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


class ContractError(SystemExit):
    """A module that breaks the contract, said in the model author's terms (docs/OWN_MODEL_AOTI.md,
    "The contract")."""


def check_cache_buffers(module, before, batch, context):
    """Every buffer forward wrote (the KV cache) must be sized to the export's batch and context:
    a cache sized for another batch or a longer context is exported as it is, and perfgate's
    bytes-per-token figure (and MBU with it) would be wrong by that factor."""
    for name, buf in module.named_buffers():
        if buf.dim() < 3 or torch.equal(before[name], buf):
            continue
        shape = list(buf.shape)
        if batch not in shape or context not in shape:
            raise ContractError(
                f"buffer '{name}' has shape {shape}, but the package is exported for batch {batch} "
                f"and context {context}: size the KV cache to exactly those (the factory is "
                f"called with batch={batch}, context={context}; build the cache from them, not "
                f"from a default maximum)")


def export_in_contract_terms(export, *args):
    """torch.export's error for a shape that depends on a position *value* (a cache sliced to
    positions[-1] + 1), translated into what to change."""
    try:
        return export(*args)
    except Exception as e:  # torch raises several types for data-dependent shapes
        text = str(e)
        if type(e).__name__ in ("GuardOnDataDependentSymNode", "UserError",
                                "DataDependentOutputException") or "data-dependent" in text \
                or "data dependent" in text:
            first = "\n".join(line for line in text.splitlines()[:6] if line.strip())
            raise ContractError(
                "forward's shapes depend on the value of `positions` (for example a cache sliced "
                "as self.k[:B, :, :L] with L = positions[-1] + 1): a package has one graph for "
                "every position, so keep every shape a function of the inputs' sizes only. Attend "
                "over the whole cache with a mask (positions[:, None] >= torch.arange(context)), "
                "and write the cache with index_copy_ at `positions` (python/tiny_kv_lm.py does "
                "both). torch.export said:\n" + first) from None
        raise


def mutated_buffer_bytes(module, exported):
    """Bytes of the buffers the exported program writes in place (its KV cache), from the program
    itself, not from what the caller says the cache is."""
    sig = exported.graph_signature
    names = set(sig.buffers_to_mutate.values())
    # Before decompositions an in-place write stays an in-place op in the graph (index_copy_ on
    # the buffer's placeholder): any argument the op's schema marks as written.
    for node in exported.graph.nodes:
        schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
        for arg, value in zip(schema.arguments if schema else (), node.args):
            if arg.alias_info is not None and arg.alias_info.is_write and \
                    getattr(value, "name", None) in sig.inputs_to_buffers:
                names.add(sig.inputs_to_buffers[value.name])
    buffers = dict(module.named_buffers())
    return sum(buffers[n].numel() * buffers[n].element_size() for n in names if n in buffers)


DECODE_PROGRAM = "decode"
# The sidecar's name is the series key: perfgate holds it to the rule of --exec model names
# (core/model_name.h), so the export refuses a name perfgate would refuse, before it compiles.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MODEL_NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


def compile_program(exported, configs):
    """AOTInductor's files for one ExportedProgram, to be packaged beside others
    (what torch._inductor.aoti_compile_and_package does for a single one)."""
    args, kwargs = exported.example_inputs
    return torch._inductor.aot_compile(exported.module(check_guards=False), args, kwargs,
                                       options={**configs, "aot_inductor.package": True})


def export_and_package(module, *, out, name, batch, context, dtype, device, exporter_versions,
                       extra_facts=None, inductor_configs=None, export=None, decode_program=True,
                       tuning_from=None):
    """Exports `module` (already on `device` in `dtype`), compiles the package, writes the
    sidecar and the tuning choices (perfgate_tuning.py). Returns the sidecar's dict.
    `export(tokens, positions, T)`, when given, makes the ExportedProgram instead of
    torch.export.export (its inputs must flatten to the same two; T is None for the static decode
    program). `tuning_from` (default: $PERFGATE_TUNING_FROM): the choices to replay."""
    if not out.endswith(".pt2"):
        raise SystemExit(f"--out {out}: the package's name must end in .pt2")
    if not MODEL_NAME.fullmatch(name or ""):
        raise SystemExit(f"--name {name!r}: a model name is {MODEL_NAME_RULE} (perfgate refuses "
                         "any other in the sidecar); give one with --name")
    module.eval()
    t0 = time.time()
    tokens = torch.zeros(batch, 2, dtype=torch.long, device=device)
    positions = torch.arange(2, dtype=torch.long, device=device)
    T = torch.export.Dim("T", min=1, max=context - 1)
    with torch.no_grad():
        before = {n: b.detach().clone() for n, b in module.named_buffers()}
        try:
            kv_bytes, logits = changed_buffer_bytes(
                module, lambda: module(torch.ones_like(tokens), positions))
        except RuntimeError as e:
            unsized = [f"'{n}' {list(b.shape)}" for n, b in module.named_buffers()
                       if b.dim() >= 3 and (batch not in b.shape or context not in b.shape)]
            hint = (f"; these buffers are not sized to batch {batch} and context {context}: "
                    + ", ".join(unsized) if unsized else "")
            raise ContractError(f"forward(tokens [{batch}, 2], positions [0, 1]) failed before "
                                f"export: {str(e).splitlines()[0]}{hint}") from None
        if logits.dim() != 3 or logits.shape[:2] != (batch, 2):
            raise ContractError(f"forward(tokens, positions) returned shape {tuple(logits.shape)}, "
                                f"expected [{batch}, 2, vocab]")
        check_cache_buffers(module, before, batch, context)
        del before
        vocab = int(logits.shape[-1])
        if export is None:
            def export(tokens, positions, T):
                shapes = ({1: T}, {0: T}) if T is not None else None
                return torch.export.export(module, (tokens, positions), dynamic_shapes=shapes,
                                           strict=False)
        programs = {"model": export_in_contract_terms(export, tokens, positions, T)}
        if decode_program:
            programs[DECODE_PROGRAM] = export_in_contract_terms(export, tokens[:, :1], positions[:1], None)
        exported_kv = mutated_buffer_bytes(module, programs["model"])
        kv_bytes = exported_kv or kv_bytes
    t_export = time.time() - t0
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    configs = dict(inductor_configs or {})
    # The decode program carries no weights: it runs on the "model" program's (and its cache).
    no_weights = {"aot_inductor.package_constants_in_so": False}
    session = tuning.Export(out, configs, tuning_from or os.environ.get(tuning.REPLAY_ENV))
    with session.compiling():
        compiled = {key: compile_program(ep, {**configs, **(no_weights if key == DECODE_PROGRAM else {})})
                    for key, ep in programs.items()}
        from torch._inductor.package import package_aoti
        package_aoti(out, compiled)
    weights = weights_sha256(module)
    export_facts = session.record(tuning.graph_sha256(programs, weights))
    t_compile = time.time() - t0 - t_export
    exporter = {"torch": torch.__version__, "python": platform.python_version(), **exporter_versions}
    if not str(device).startswith("cuda"):
        # A CPU package's kernels are compiled for this many OpenMP threads (num_threads(N) in
        # its code), whatever the measuring machine's thread setting: shown with every run.
        exporter["cpu_threads"] = str(torch.get_num_threads())
    if configs:  # part of what made the kernels: shown with the run, like the versions
        exporter["inductor_configs"] = ",".join(
            f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sorted(configs.items()))
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
        "weights_sha256": weights,
        "decode_program": DECODE_PROGRAM if decode_program else None,
        "exporter": exporter,
        "export": export_facts,
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
    parser.add_argument("--inductor-config", metavar="KEY=VALUE", action="append", default=[],
                        help="an Inductor option for both programs, repeatable; VALUE is JSON "
                        "(true, 4, \"s\") or else a string. coordinate_descent_tuning=true is "
                        "gpt-fast's decode setting (docs/OWN_MODEL_AOTI.md)")
    parser.add_argument("--tuning-from", metavar="PATH", default=None,
                        help="replay the tuning choices another export recorded (its PATH.tuning.json, "
                        "or a folder holding one named like this package's); default: "
                        "$PERFGATE_TUNING_FROM. docs/OWN_MODEL_AOTI.md")
    parser.add_argument("--no-decode-program", dest="decode_program", action="store_false",
                        help="package only the program over a symbolic T (no static T = 1 "
                        "decode program; about half the compile time)")


def inductor_configs(args):
    """--inductor-config KEY=VALUE ... as the options dict of torch._inductor.aot_compile."""
    configs = {}
    for item in args.inductor_config:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--inductor-config {item}: expected KEY=VALUE")
        try:
            configs[key] = json.loads(value)
        except ValueError:
            configs[key] = {"True": True, "False": False}.get(value, value)
    return configs


def resolved_out(args):
    out = args.out.replace("{batch}", str(args.batch))
    stem = os.path.basename(args.out)[:-len(".pt2")]
    name = args.name or re.sub(r"[-_.]?b?\{batch\}", "", stem) or stem
    return out, name
