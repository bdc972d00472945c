"""The --exec recipe for a Hugging Face causal LM (python/hf_bench.py), run as docs/OWN_MODEL.md
writes it: `perfgate run --exec "python -m hf_bench --config ..."` with perfgate's python/ folder
on PYTHONPATH, eager and under torch.compile, on a tiny random Llama on the CPU. Every cell is ok
with the samples the sweep asked for, and the run records the engine, transformers' version and
the harness that timed it. (torch.compile runs with the aot_eager backend here: the compiled
path's tracing and guards without Inductor's C++ kernel builds, minutes on a small CPU.)

    hf_bench_test.py PERFGATE   (the venv's Python, which has torch and transformers)
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERFGATE = None
CONFIG = {"model_type": "llama", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128,
          "max_position_embeddings": 64}


class HfBench(unittest.TestCase):
    def run_recipe(self, extra):
        with tempfile.TemporaryDirectory() as tmp:
            config = os.path.join(tmp, "llama-tiny.json")
            with open(config, "w") as f:
                json.dump(CONFIG, f)
            db = os.path.join(tmp, "runs.db")
            env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
            cmd = f"{sys.executable} -m hf_bench --config {config} {extra}"
            r = subprocess.run([PERFGATE, "run", "--exec", cmd, "--model", "llama-tiny",
                                "--batch-sizes", "1", "--seq-lens", "8", "--gen-tokens", "6",
                                "--warmup", "1", "--reps", "3", "--db", db, "--quiet"],
                               env=env, capture_output=True, text=True, timeout=600)
            self.assertEqual(r.returncode, 0, r.stderr)
            out = subprocess.run([PERFGATE, "export", "--db", db, "--format", "json"],
                                 capture_output=True, text=True, check=True).stdout
            return json.loads(out)["runs"][0]

    def check_run(self, run, engine):
        for c in run["cells"]:
            self.assertEqual(c["status"], "ok", c.get("reason"))
            self.assertEqual(len(c["samples"]["prefill_ms"]), 3)
            self.assertTrue(all(len(d) == 5 for d in c["samples"]["decode_ms"]))
        self.assertEqual(len(run["cells"]), 1)
        self.assertEqual(run["env"]["engine"], engine)
        self.assertTrue(run["env"].get("engine.transformers"), run["env"])
        self.assertIn(os.path.join(ROOT, "python", "perfgate_bench.py"),
                      run["env"].get("engine.perfgate_bench", ""))

    def test_eager(self):
        self.check_run(self.run_recipe(""), "transformers-eager")

    def test_torch_compile(self):
        self.check_run(self.run_recipe("--compile --compile-backend aot_eager"),
                       "transformers-torch.compile-aot_eager")


if __name__ == "__main__":
    PERFGATE = sys.argv.pop(1)
    unittest.main(verbosity=2)
