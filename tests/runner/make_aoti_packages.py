#!/usr/bin/env python3
"""Test fixture: AOTInductor packages made as a user would make them, in parallel.

OUT/tiny-b1.pt2   python/export_module.py with the reference module python/tiny_kv_lm.py, and one
                  --inductor-config option (recorded in the sidecar, shown with the run)
OUT/hf-b1.pt2     python/export_hf.py with a tiny random Llama config (transformers' static cache)

Each with its sidecar. Packages already made by an earlier run of this build tree are kept."""
import json
import os
import subprocess
import sys

out = sys.argv[1]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
py = os.path.join(root, "python")
tiny_llama = {"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
              "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "vocab_size": 256}
jobs = {
    "tiny": [os.path.join(py, "export_module.py"), "--name", "tiny",
             "--inductor-config", "coordinate_descent_tuning=true"],
    "hf": [os.path.join(py, "export_hf.py"), "--config", json.dumps(tiny_llama),
           "--name", "llama-tiny"],
}
procs = []
for stem, args in jobs.items():
    if os.path.exists(os.path.join(out, f"{stem}-b1.json")):
        continue
    procs.append(subprocess.Popen([sys.executable, *args, "--out",
                                   os.path.join(out, stem + "-b{batch}.pt2"),
                                   "--batch", "1", "--context", "64"]))
sys.exit(max([p.wait() for p in procs], default=0))
