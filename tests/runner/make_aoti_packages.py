#!/usr/bin/env python3
"""Test fixture: the tiny reference module (python/tiny_kv_lm.py) as an AOTInductor package,
OUT/tiny-b1.pt2 with its sidecar, through python/export_module.py as a user would run it."""
import os
import subprocess
import sys

out = sys.argv[1]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.path.exists(os.path.join(out, "tiny-b1.json")):
    sys.exit(0)  # already made by an earlier ctest run of this build tree
subprocess.run([sys.executable, os.path.join(root, "python", "export_module.py"),
                "--out", os.path.join(out, "tiny-b{batch}.pt2"), "--name", "tiny",
                "--batch", "1", "--context", "64"], check=True)
