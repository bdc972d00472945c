"""python/perfgate_bench.py on a CPU PyTorch model: what it prints is docs/PROTOCOL.md's
protocol, stray output cannot corrupt it, failures become oom / error lines, and perfgate stores
what it prints. Usage: perfgate_bench_test.py PERFGATE_BINARY (run by ctest with the venv's
Python, which has torch)."""

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

BENCH = textwrap.dedent("""
    import sys
    sys.path.insert(0, {helper!r})
    import torch
    import perfgate_bench as pb

    cell = pb.cell()
    torch.manual_seed(cell.seed)
    torch.set_num_threads(1)
    layers = torch.nn.Sequential(*[torch.nn.Linear(64, 64) for _ in range(4)]).eval()
    x = torch.randn(cell.batch_size, cell.prompt_len, 64)
    calls = []
    print("a stray print from model code")

    @torch.inference_mode()
    def prefill():
        calls.append("p")
        layers(x)

    @torch.inference_mode()
    def decode_step(i):
        calls.append(i)
        if {fail_at!r} == i:
            raise {error}
        layers(x[:, :1])

    pb.run(cell, prefill, decode_step, engine="toy", versions={{"toy": "0.1"}},
           model_info={{"param_bytes": 4 * 64 * 65 * 4}})
    print("calls", len(calls), file=sys.stderr)
""")


def cell(**over):
    c = {"protocol": 1, "model": "toy", "batch_size": 2, "prompt_len": 8, "gen_tokens": 5,
         "warmup": 2, "reps": 3, "device": "cpu", "dtype": "fp32", "seed": 1,
         "kv_cache": True, "attention": "sdpa", "cuda_graphs": False, "repo": "."}
    c.update(over)
    return c


class Helper(unittest.TestCase):
    def bench(self, stdin, fail_at=None, error="ValueError('bad step')", env=None):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "bench.py")
        with open(path, "w") as f:
            f.write(BENCH.format(helper=os.path.join(ROOT, "python"), fail_at=fail_at, error=error))
        p = subprocess.run([sys.executable, path], input=stdin, capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, **(env or {})))
        lines = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        return p, lines

    def test_prints_hello_one_rep_line_per_repetition_and_end(self):
        p, lines = self.bench(json.dumps(cell()))
        self.assertEqual(p.returncode, 0, p.stderr)
        hello, reps, end = lines[0], lines[1:-1], lines[-1]
        self.assertEqual((hello["type"], hello["protocol"], hello["engine"]), ("hello", 1, "toy"))
        self.assertIn("torch", hello["versions"])
        self.assertEqual(hello["versions"]["toy"], "0.1")
        self.assertEqual(hello["model"], {"param_bytes": 4 * 64 * 65 * 4})
        self.assertEqual([r["rep"] for r in reps], [0, 1, 2])
        for r in reps:
            self.assertEqual(r["type"], "rep")
            self.assertEqual(len(r["decode_ms"]), 4)
            self.assertTrue(all(v > 0 for v in [r["prefill_ms"]] + r["decode_ms"]))
        self.assertEqual(end, {"type": "end"})
        # Warm-up repetitions ran too: 5 repetitions of 1 prefill + 4 steps.
        self.assertIn("calls 25", p.stderr)

    def test_stray_output_goes_to_stderr(self):
        p, _ = self.bench(json.dumps(cell()))
        self.assertNotIn("stray", p.stdout)
        self.assertIn("a stray print from model code", p.stderr)

    def test_an_exception_becomes_an_error_line_and_a_failing_exit(self):
        p, lines = self.bench(json.dumps(cell()), fail_at=2)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(lines[-1], {"type": "error", "reason": "ValueError: bad step"})
        self.assertIn("Traceback", p.stderr)

    def test_out_of_memory_becomes_an_oom_line(self):
        p, lines = self.bench(json.dumps(cell()), fail_at=1, error="MemoryError('no room')")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(lines[-1], {"type": "oom", "reason": "MemoryError: no room"})

    def test_without_stdin_the_cell_comes_from_the_environment(self):
        p, lines = self.bench("", env={"PERFGATE_REPS": "2", "PERFGATE_GEN_TOKENS": "3",
                                       "PERFGATE_BATCH": "1", "PERFGATE_WARMUP": "0"})
        self.assertEqual(p.returncode, 0, p.stderr)
        reps = [l for l in lines if l["type"] == "rep"]
        self.assertEqual(len(reps), 2)
        self.assertEqual(len(reps[0]["decode_ms"]), 2)

    def test_a_newer_protocol_is_refused(self):
        p, lines = self.bench(json.dumps(cell(protocol=4)))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("perfgate speaks protocol 4, this helper 1 to 3", p.stderr)

    def test_a_one_shot_cell_of_protocol_3_is_answered_as_before(self):
        p, lines = self.bench(json.dumps(cell(protocol=3)))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(lines[0]["protocol"], 3)
        self.assertEqual([l["type"] for l in lines], ["hello", "rep", "rep", "rep", "end"])

    def test_asked_for_a_profile_it_prints_one_after_the_repetitions(self):
        p, lines = self.bench(json.dumps(cell(protocol=2, profile=True)))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(lines[0]["protocol"], 2)
        self.assertEqual([l["type"] for l in lines[-2:]], ["profile", "end"])
        self.assertEqual(lines[-3]["type"], "rep")
        prof = lines[-2]
        self.assertEqual(prof["profiler"], "torch.profiler", prof.get("note"))
        self.assertEqual([s["step"] for s in prof["steps"]], [-1, 0, 1, 2, 3])
        linear = [r for r in prof["steps"][1]["by_name"] if r["name"] == "aten::linear"]
        self.assertEqual([(r["kind"], r["count"]) for r in linear], [("op", 4)])
        # Its sequence ran after the timed ones: 5 timed and warm-up, 1 profiled.
        self.assertIn("calls 30", p.stderr)

    def test_not_asked_or_speaking_version_1_it_prints_no_profile(self):
        for c in (cell(protocol=2, profile=False), cell(protocol=1, profile=True)):
            p, lines = self.bench(json.dumps(c))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(lines[0]["protocol"], c["protocol"])
            self.assertNotIn("profile", [l["type"] for l in lines])
            self.assertIn("calls 25", p.stderr)

    # ---- worker mode (protocol 3, `perfgate ab`): the same script, one repetition per request

    def worker(self, fail_at=None, error="ValueError('bad step')", **over):
        """The script started as perfgate starts a worker: the cell's line on stdin, which stays
        open; returns the process, its requests written and its lines read by the caller."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "bench.py")
        with open(path, "w") as f:
            f.write(BENCH.format(helper=os.path.join(ROOT, "python"), fail_at=fail_at, error=error))
        c = cell(protocol=3, worker=True, **over)
        env = dict(os.environ, PERFGATE_WORKER="on", PERFGATE_PROTOCOL="3")
        p = subprocess.Popen([sys.executable, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        p.stdin.write(json.dumps(c) + "\n")
        p.stdin.flush()
        return p

    @staticmethod
    def ask(p, request):
        p.stdin.write(json.dumps(request) + "\n")
        p.stdin.flush()

    @staticmethod
    def answer(p):
        line = p.stdout.readline()
        return json.loads(line) if line else None

    def test_a_worker_answers_one_repetition_per_request_then_the_end(self):
        p = self.worker(reps=5, warmup=2)
        hello = self.answer(p)
        self.assertEqual((hello["type"], hello["protocol"], hello["engine"]), ("hello", 3, "toy"))
        self.assertEqual(self.answer(p), {"type": "ready"})
        for i in range(3):  # fewer than reps: perfgate decides when to end
            self.ask(p, {"op": "rep", "rep": i})
            r = self.answer(p)
            self.assertEqual((r["type"], r["rep"], len(r["decode_ms"])), ("rep", i, 4))
            self.assertTrue(all(v > 0 for v in [r["prefill_ms"]] + r["decode_ms"]))
        self.ask(p, {"op": "end"})
        self.assertEqual(self.answer(p), {"type": "end"})
        self.assertIsNone(self.answer(p))  # nothing after end
        p.stdin.close()
        self.assertEqual(p.wait(timeout=60), 0)
        stderr = p.stderr.read()
        # 2 warm-up and 3 timed repetitions of 1 prefill + 4 steps; the stray print on stderr.
        self.assertIn("calls 25", stderr)
        self.assertIn("a stray print from model code", stderr)

    def test_a_worker_profiles_after_its_repetitions_when_asked_for_the_end(self):
        p = self.worker(reps=3, warmup=1, profile=True)
        self.assertEqual([self.answer(p)["type"] for _ in range(2)], ["hello", "ready"])
        self.ask(p, {"op": "rep", "rep": 0})
        self.assertEqual(self.answer(p)["type"], "rep")
        self.ask(p, {"op": "end"})
        prof, end = self.answer(p), self.answer(p)
        self.assertEqual((prof["type"], end["type"]), ("profile", "end"))
        self.assertEqual(prof["profiler"], "torch.profiler", prof.get("note"))
        self.assertEqual([s["step"] for s in prof["steps"]], [-1, 0, 1, 2, 3])
        p.stdin.close()
        self.assertEqual(p.wait(timeout=60), 0)
        self.assertIn("calls 15", p.stderr.read())  # 1 warm-up, 1 timed, 1 profiled

    def test_a_worker_exits_when_stdin_ends_before_the_end_request(self):
        p = self.worker()
        self.assertEqual([self.answer(p)["type"] for _ in range(2)], ["hello", "ready"])
        p.stdin.close()  # perfgate went away
        self.assertNotEqual(p.wait(timeout=60), 0)
        stderr = p.stderr.read()
        self.assertIn("stdin ended before the end request", stderr)
        self.assertNotIn("calls", stderr)  # the script's code after run() did not run

    def test_a_worker_refuses_a_request_out_of_order(self):
        p = self.worker()
        self.assertEqual([self.answer(p)["type"] for _ in range(2)], ["hello", "ready"])
        self.ask(p, {"op": "rep", "rep": 1})
        self.assertEqual(self.answer(p), {
            "type": "error",
            "reason": "RuntimeError: perfgate_bench: asked for repetition 1, expected 0 (of at most 3)"})
        self.assertNotEqual(p.wait(timeout=60), 0)

    def test_a_worker_that_fails_in_its_warm_up_reports_it_instead_of_ready(self):
        p = self.worker(fail_at=1, error="MemoryError('no room')")
        self.assertEqual(self.answer(p)["type"], "hello")
        self.assertEqual(self.answer(p), {"type": "oom", "reason": "MemoryError: no room"})
        p.stdin.close()
        self.assertEqual(p.wait(timeout=60), 0)

    def test_perfgate_stores_what_the_helper_prints(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        with open(os.path.join(d, "bench.py"), "w") as f:
            f.write(BENCH.format(helper=os.path.join(ROOT, "python"), fail_at=None, error=""))
        db = os.path.join(d, "runs.db")
        cmd = [PERFGATE, "run", "--exec", "%s bench.py" % sys.executable, "--model", "toy",
               "--device", "cpu", "--batch-sizes", "1,2", "--seq-lens", "8", "--gen-tokens", "4",
               "--warmup", "1", "--reps", "3", "--db", db, "--repo", d, "--quiet"]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        out = subprocess.run([PERFGATE, "export", "--db", db, "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
        run = json.loads(out)["runs"][0]
        self.assertEqual(run["env"]["engine"], "toy")
        self.assertEqual(run["env"]["engine.toy"], "0.1")
        self.assertEqual([c["status"] for c in run["cells"]], ["ok", "ok"])
        self.assertEqual([c["key"]["batch_size"] for c in run["cells"]], [1, 2])
        self.assertEqual(json.loads(run["config"] if isinstance(run.get("config"), str) else
                                    json.dumps(run.get("config", {}))).get("exec"),
                         "%s bench.py" % sys.executable)


if __name__ == "__main__":
    PERFGATE = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
