"""Exports model.py as an AOTInductor package for `perfgate run --model aoti:...`
(perf/sweep-aoti.toml): the workflow's `prepare` step, run in the merge-base's checkout and in
the head's, so that each side is measured with its own compiled model.

perfgate_export is perfgate's exporter library (python/perfgate_export.py; one file, torch only),
on PYTHONPATH as perfgate_bench is (the action puts the pinned perfgate's python/ there). It checks the contract, compiles the package (and its static T = 1 decode program) and
writes the sidecar of model facts beside it (docs/OWN_MODEL_AOTI.md).

    python3 export.py            # writes out/tiny-lm-b1.pt2 and out/tiny-lm-b1.json
"""

import os
import sys

import torch

try:
    import perfgate_export as pe
except ImportError:  # inside perfgate's own repository: the library's original
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import perfgate_export as pe
from model import TinyLM

BATCH, CONTEXT = 1, 64  # the sweep's batch, and its longest prompt + generated tokens

torch.manual_seed(0)
model = TinyLM(context=CONTEXT).eval()
model.allocate_cache(BATCH, CONTEXT)
pe.export_and_package(model, out=f"out/tiny-lm-b{BATCH}.pt2", name="tiny-lm-aoti", batch=BATCH,
                      context=CONTEXT, dtype="fp32", device="cpu", exporter_versions={})
