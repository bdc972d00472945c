"""`perfgate run --exec` with python/perfgate_bench.py's profile (protocol 2), end to end on CPU:
a tiny PyTorch model in a real git repository at two commits, the head adding an unfused
elementwise op per layer (x * sigmoid(x)); `perfgate compare` explains the change by naming
aten::sigmoid and its calls per step, and its listed deltas with the time between ops add up to
the change of the profiled step's span. A malformed profile line makes the cell an error naming the
field, a version-1 benchmark (no profile) still works, and `--profile off` asks for no profile.
Usage: perfgate_bench_profile_test.py PERFGATE_BINARY (ctest runs it with the venv's Python)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERFGATE = None
LAYERS = 3

MODEL = textwrap.dedent("""
    import torch

    EXTRA_OP = False  # the head commit turns this on: one more elementwise op per layer


    class Toy(torch.nn.Module):
        def __init__(self, layers={layers}, width=32):
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(layers))

        def forward(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
                if EXTRA_OP:
                    x = x * torch.sigmoid(x)
            return x
""").format(layers=LAYERS)

BENCH = textwrap.dedent("""
    import sys
    sys.path.insert(0, {helper!r})
    import torch
    import perfgate_bench as pb
    from model import Toy

    cell = pb.cell()
    print("asked for a profile:", cell.profile, file=sys.stderr)
    torch.manual_seed(cell.seed)
    torch.set_num_threads(1)
    model = Toy().eval()
    x = torch.randn(cell.batch_size, cell.prompt_len, 32)

    @torch.inference_mode()
    def prefill():
        model(x)

    @torch.inference_mode()
    def decode_step(i):
        model(x[:, :1])

    pb.run(cell, prefill, decode_step, engine="toy")
""")

# A benchmark in another language would print these lines itself: gen-tokens 3, reps 2.
RAW_V1 = """printf '%s\\n' '{"type":"hello","protocol":1,"engine":"raw"}' \\
  '{"type":"rep","rep":0,"prefill_ms":3,"decode_ms":[1.5,1.25]}' \\
  '{"type":"rep","rep":1,"prefill_ms":3,"decode_ms":[1.5,1.25]}' '{"type":"end"}'
"""
STEP = '{"step":%d,"wall_ms":1,"ops":2,"kernels":%s,"syncs":0,"d2h_copies":0,"alloc_bytes":0,' \
       '"peak_bytes":null,"by_name":[]}'
RAW_BAD_PROFILE = """printf '%%s\\n' '{"type":"hello","protocol":2,"engine":"raw"}' \\
  '{"type":"rep","rep":0,"prefill_ms":3,"decode_ms":[1.5,1.25]}' \\
  '{"type":"rep","rep":1,"prefill_ms":3,"decode_ms":[1.5,1.25]}' \\
  '{"type":"profile","profiler":"raw","wall_ms":3,"note":null,"steps":[%s,%s,%s]}' \\
  '{"type":"end"}'
""" % (STEP % (-1, '"many"'), STEP % (0, "0"), STEP % (1, "0"))


def git(repo, *args):
    subprocess.run(["git", "-C", repo] + list(args), check=True, capture_output=True)


def commit(repo, message):
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


class ExecProfile(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.repo = os.path.join(self.dir, "project")
        os.makedirs(self.repo)
        self.db = os.path.join(self.dir, "runs.db")
        self.write("model.py", MODEL)
        self.write("bench.py", BENCH.format(helper=os.path.join(ROOT, "python")))
        self.write("v1.sh", RAW_V1)
        self.write("bad.sh", RAW_BAD_PROFILE)
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "config", "user.email", "ci@perfgate.test")
        git(self.repo, "config", "user.name", "perfgate ci")
        git(self.repo, "config", "commit.gpgsign", "false")
        self.base = commit(self.repo, "toy model")

    def write(self, name, text):
        with open(os.path.join(self.repo, name), "w") as f:
            f.write(text)

    def perfgate_run(self, command, *extra, gen_tokens=3):
        cmd = [PERFGATE, "run", "--exec", command, "--model", "toy", "--device", "cpu",
               "--batch-sizes", "1", "--seq-lens", "8", "--gen-tokens", str(gen_tokens),
               "--warmup", "1", "--reps", "2", "--db", self.db, "--repo", self.repo,
               "--quiet"] + list(extra)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p

    def last_cell(self):
        out = subprocess.run([PERFGATE, "export", "--db", self.db, "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["runs"][-1]["cells"][0]

    def test_compare_names_the_added_op_and_its_calls_per_step(self):
        bench = "%s bench.py" % sys.executable
        self.perfgate_run(bench)
        base_cell = self.last_cell()
        self.assertEqual(base_cell["status"], "ok", base_cell)
        prof = base_cell["profile"]
        self.assertEqual(prof["profiler"], "torch.profiler", prof)
        self.assertEqual([s["step"] for s in prof["steps"]], [-1, 0, 1])
        decode = prof["steps"][1]
        linear = [r for r in decode["by_name"] if r["name"] == "aten::linear"]
        self.assertEqual([(r["kind"], r["count"]) for r in linear], [("op", LAYERS)], decode)
        self.assertEqual(decode["ops"], sum(r["count"] for r in decode["by_name"]))
        self.assertGreater(decode["alloc_bytes"], 0)
        for s in prof["steps"]:  # each step on the host's timeline: busy within span within wall
            self.assertGreater(s["busy_ms"], 0, s)
            self.assertLessEqual(s["busy_ms"], s["span_ms"], s)
            self.assertLessEqual(s["span_ms"], s["wall_ms"] + 0.05, s)

        self.write("model.py", MODEL.replace("EXTRA_OP = False", "EXTRA_OP = True"))
        head = commit(self.repo, "model: x * sigmoid(x) after every layer")
        self.perfgate_run(bench)
        p = subprocess.run([PERFGATE, "compare", "--base", self.base, "--head", head, "--db",
                            self.db, "--repo", self.repo, "--format", "json"],
                           capture_output=True, text=True, timeout=60)
        self.assertIn(p.returncode, (0, 1, 3), p.stderr)
        explain = json.loads(p.stdout)["cells"][0]["explain"]
        self.assertTrue(explain["available"], explain)
        self.assertEqual(explain["kind"], "op")
        self.assertTrue(explain["counters_changed"])
        ops = [c for c in explain["decode"]["counters"] if c["counter"] == "ops"][0]
        self.assertEqual(ops["head"] - ops["base"], 2 * LAYERS, ops)  # sigmoid and mul per layer
        by_name = {r["name"]: (r["base_count"], r["head_count"]) for r in ops["by_name"]}
        self.assertEqual(by_name["aten::sigmoid"], (0, LAYERS), ops)
        self.assertEqual(by_name["aten::mul"], (0, LAYERS), ops)
        self.assertIn("aten::sigmoid", [r["name"] for r in explain["decode"]["appeared"]])
        # The time between ops is measured, and the rows with it are the step's span.
        d = explain["decode"]
        t = d["timeline"]
        self.assertIsNotNone(t, d)
        rows = sum(r["delta_ms"] for r in d["grew"]) + d["other_delta_ms"]
        self.assertAlmostEqual(rows, d["head_ms"] - d["base_ms"], places=9)
        self.assertAlmostEqual(rows + t["gap_delta_ms"] - t["overlap_delta_ms"],
                               t["span_delta_ms"], places=9)
        # The report a person reads names it too.
        text = subprocess.run([PERFGATE, "compare", "--base", self.base, "--head", head, "--db",
                               self.db, "--repo", self.repo], capture_output=True, text=True)
        self.assertIn("aten::sigmoid", text.stdout, text.stdout + text.stderr)

    def test_profile_off_asks_the_benchmark_for_none(self):
        p = self.perfgate_run("%s bench.py" % sys.executable, "--profile", "off")
        cell = self.last_cell()
        self.assertEqual(cell["status"], "ok", cell)
        self.assertNotIn("profile", cell)

    def test_a_malformed_profile_line_makes_the_cell_an_error_naming_the_field(self):
        self.perfgate_run("sh bad.sh")
        cell = self.last_cell()
        self.assertEqual(cell["status"], "error")
        self.assertIn("stdout line 4: profile.steps[0].kernels must be an integer >= 0, got "
                      '"many"', cell["reason"])
        self.assertNotIn("profile", cell)

    def test_a_version_1_benchmark_still_works(self):
        self.perfgate_run("sh v1.sh")
        cell = self.last_cell()
        self.assertEqual(cell["status"], "ok", cell)
        self.assertEqual(len(cell["samples"]["decode_ms"]), 2)
        self.assertNotIn("profile", cell)


if __name__ == "__main__":
    PERFGATE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
