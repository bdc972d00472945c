#!/usr/bin/env python3
"""One variant of bench/explain/variant_model.py as a perfgate AOTInductor package, exported as
python/export_hf.py exports (transformers' own export of its static-cache wrapper).
    export_variant.py CONFIG.json VARIANT OUT_PATTERN.pt2 --batch 1 --dtype bf16 --device cuda
"""
import argparse
import sys

import variant_model as vm
import perfgate_export as pe
import torch
import transformers


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("variant", choices=vm.VARIANTS)
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    cfg = vm.load(args.config)
    context = int(cfg.get("context", 1024))
    module, exportable, _ = vm.build(cfg, args.variant, batch=args.batch, device=args.device,
                                     dtype=args.dtype)
    out = args.out.replace("{batch}", str(args.batch))
    pe.export_and_package(module, out=out, name="llama-explain", batch=args.batch,
                          context=context, dtype=args.dtype, device=args.device,
                          exporter_versions={"transformers": transformers.__version__},
                          decode_program=True, inductor_configs={},
                          export=lambda tokens, positions, T: exportable.export(
                              input_ids=tokens, cache_position=positions,
                              dynamic_shapes=None if T is None else
                              {"input_ids": {1: T}, "cache_position": {0: T}}))
    print("exported %s (%s, torch %s)" % (out, args.variant, torch.__version__), file=sys.stderr)


if __name__ == "__main__":
    main()
