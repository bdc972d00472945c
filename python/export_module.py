#!/usr/bin/env python3
"""Export a plain PyTorch module with its own KV cache as a perfgate AOTInductor package.

    python3 python/export_module.py --factory mypkg.model:make_model --out out/model.pt2 \
        --batch 1 --context 1024 --dtype bf16 --device cuda

The factory is called as factory(batch=B, context=L, **json.loads(--kwargs)) and must return a
module that follows the contract in perfgate_export.py. Weights are whatever the factory makes
(random from --seed unless it loads a checkpoint). Writes PATH.pt2 and PATH.json.
"""
import argparse
import importlib
import json
import os
import sys

# From a checkout (python3 python/export_module.py) perfgate_export.py is beside this file; from the
# wheel (perfgate-export-module, python -m perfgate.export_module) it is an installed module.
if not __package__:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import perfgate_export as pe  # noqa: E402

# perfgate's reference module: python/tiny_kv_lm.py, in the wheel perfgate/tiny_kv_lm.py.
DEFAULT_FACTORY = f"{__package__}.tiny_kv_lm:make_model" if __package__ else "tiny_kv_lm:make_model"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factory", default=DEFAULT_FACTORY,
                    help="module:function that builds the model (default: perfgate's tiny one)")
    ap.add_argument("--kwargs", default="{}", help="JSON object of extra factory arguments")
    pe.common_arguments(ap)
    args = ap.parse_args()
    mod_name, _, fn_name = args.factory.partition(":")
    if not fn_name:
        ap.error(f"--factory {args.factory}: expected module:function")
    sys.path.insert(0, os.getcwd())
    factory = getattr(importlib.import_module(mod_name), fn_name)
    torch.manual_seed(args.seed)
    model = factory(batch=args.batch, context=args.context, **json.loads(args.kwargs))
    model = model.to(device=args.device, dtype=pe.DTYPES[args.dtype])
    out, name = pe.resolved_out(args)
    pe.export_and_package(model, out=out, name=name, batch=args.batch, context=args.context,
                          dtype=args.dtype, device=args.device, exporter_versions={},
                          decode_program=args.decode_program, tuning_from=args.tuning_from,
                          inductor_configs=pe.inductor_configs(args))


if __name__ == "__main__":
    main()
