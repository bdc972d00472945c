"""`perfgate ab` end to end on real git checkouts and a real --exec benchmark in worker mode
(python/perfgate_bench.py): an A/A A/B run passes the gate, a head that does genuinely more work
per decode step is slower in its pairs and fails it, a worker that crashes mid-cell makes only its
own side's cell an error (the other keeps its samples), and killing perfgate kills both workers.
Usage: ab_test.py PERFGATE_BINARY (run by ctest)."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PERFGATE = None

# Pure-Python work per decode step: WORK iterations of integer arithmetic (about 0.1 µs each), so
# the head's extra work is real work on any x86-64 CPU.
BENCH = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {helper!r})
    import perfgate_bench as pb

    WORK = {work}
    cell = pb.cell()
    pid_dir = os.environ.get("AB_TEST_PID_DIR")
    if pid_dir:
        open(os.path.join(pid_dir, str(os.getpid())), "w").close()
    steps = [0]

    def spin(n):
        x = 0
        for i in range(n):
            x = (x * 31 + i) % 1000003
        return x

    def prefill():
        spin(WORK * 2)

    def decode_step(i):
        steps[0] += 1
        crash_after = int(os.environ.get("AB_TEST_CRASH_AFTER", "0"))
        if crash_after and cell.batch_size == 2 and steps[0] > crash_after:
            os._exit(3)
        if os.environ.get("AB_TEST_SLOW"):
            import time
            time.sleep(0.05)
        spin(WORK)

    pb.run(cell, prefill, decode_step, engine="spin", versions={{"spin": "1"}})
""")


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


class AbRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = cls.tmp.name
        cls.repo = os.path.join(root, "repo")
        os.makedirs(cls.repo)
        git(cls.repo, "init", "-q", "-b", "main")
        helper = os.path.join(ROOT, "python")
        cls.shas = {}
        for name, work in (("base", 8000), ("slow", 16000)):
            with open(os.path.join(cls.repo, "bench.py"), "w") as f:
                f.write(BENCH.format(helper=helper, work=work))
            git(cls.repo, "add", "bench.py")
            git(cls.repo, "commit", "-q", "-m", name)
            sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cls.repo, check=True,
                                 capture_output=True, text=True).stdout.strip()
            cls.shas[name] = sha
        cls.checkouts = {}
        for name, sha in cls.shas.items():
            for copy in ("a", "b"):
                path = os.path.join(root, f"{name}-{copy}")
                git(cls.repo, "worktree", "add", "-q", "--detach", path, sha)
                cls.checkouts[f"{name}-{copy}"] = path

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def ab(self, base, head, db, extra=(), env=None, ab_runs="1", **kw):
        runs = ["--ab-runs", ab_runs] if ab_runs else []  # None: perfgate ab's default
        cmd = [PERFGATE, "ab", *runs, "--base", self.checkouts[base], "--head", self.checkouts[head],
               "--exec", "python3 bench.py", "--model", "spin", "--device", "cpu",
               "--batch-sizes", "1,2", "--seq-lens", "8", "--gen-tokens", "6", "--warmup", "1",
               "--reps", "12", "--order-seed", "7", "--profile", "off", "--db", db, *extra]
        return subprocess.run(cmd, capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, timeout=600, **kw)

    def compare(self, db, base, head):
        return subprocess.run([PERFGATE, "compare", "--base", base, "--head", head, "--db", db],
                              capture_output=True, text=True, timeout=120)

    def runs(self, db):
        out = subprocess.run([PERFGATE, "export", "--db", db, "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)["runs"]

    def test_a_and_a_pass_the_gate(self):
        db = os.path.join(self.tmp.name, "aa.db")
        r = self.ab("base-a", "base-b", db, ab_runs=None)  # the default: 5 A/B runs
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        runs = self.runs(db)
        self.assertEqual(len(runs), 10)
        by_uuid = {}
        for run in runs:
            by_uuid.setdefault(run["ab"]["uuid"], []).append(run)
        self.assertEqual(len(by_uuid), 5)
        for pair in by_uuid.values():
            self.assertEqual(sorted(run["ab"]["side"] for run in pair), ["base", "head"])
        self.assertEqual(sorted({run["ab"]["seed"] for run in runs}), [7, 8, 9, 10, 11])
        for run in runs:
            for c in run["cells"]:
                self.assertEqual(c["status"], "ok", c)
                self.assertEqual(len(c["samples"]["ab_position"]), 12)
        # Each pair has one side first and the other second.
        for pair in by_uuid.values():
            base, head = sorted(pair, key=lambda run: run["ab"]["side"])
            for cb, ch in zip(base["cells"], head["cells"]):
                for pb_, ph in zip(cb["samples"]["ab_position"], ch["samples"]["ab_position"]):
                    self.assertEqual(pb_ + ph, 1)
        sha = self.shas["base"]
        g = self.compare(db, sha, sha)  # one commit: its base sides against its head sides
        self.assertEqual(g.returncode, 0, g.stdout + g.stderr)
        self.assertIn("paired t on the means of 5 A/B runs", g.stdout)

    def test_a_genuinely_slower_head_is_slower_in_its_pairs_and_fails(self):
        db = os.path.join(self.tmp.name, "ab.db")
        r = self.ab("base-a", "slow-a", db)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        by_side = {run["ab"]["side"]: run for run in self.runs(db)}
        for cb, ch in zip(by_side["base"]["cells"], by_side["head"]["cells"]):
            tb = [sum(s) / len(s) for s in cb["samples"]["decode_ms"]]
            th = [sum(s) / len(s) for s in ch["samples"]["decode_ms"]]
            slower = sum(h > b for b, h in zip(tb, th))
            self.assertGreaterEqual(slower, 9, (tb, th))  # twice the work: nearly every pair
        g = self.compare(db, self.shas["base"], self.shas["slow"])
        self.assertEqual(g.returncode, 1, g.stdout + g.stderr)
        self.assertIn("paired t on the 6 ABBA blocks", g.stdout)

    def test_the_other_side_keeps_its_samples_when_one_worker_crashes(self):
        db = os.path.join(self.tmp.name, "crash-one.db")
        # The head crashes in its 4th timed repetition: after its warm-up, the 2 shared warm-up
        # repetitions and 3 timed ones, of 5 decode steps each.
        wrapper = "AB_TEST_CRASH_AFTER=%d python3 bench.py" % ((1 + 2 + 3) * 5)
        r = self.ab("base-a", "base-b", db, extra=["--head-worker", wrapper])
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        by_side = {run["ab"]["side"]: run for run in self.runs(db)}
        base2 = [c for c in by_side["base"]["cells"] if c["key"]["batch_size"] == 2][0]
        head2 = [c for c in by_side["head"]["cells"] if c["key"]["batch_size"] == 2][0]
        self.assertEqual(head2["status"], "error", head2)
        self.assertIn("status 3", head2["reason"])
        self.assertEqual(base2["status"], "ok", base2)
        n = len(base2["samples"]["prefill_ms"])
        self.assertIn(n, (3, 4))  # every repetition it took before the head crashed
        self.assertEqual(len(base2["samples"]["ab_position"]), n)

    def test_a_wrapper_worker_runs_the_sides_own_command_from_the_environment(self):
        # The action's sandbox (ci/scripts/ab_worker.sh) is a --base-worker/--head-worker that
        # runs what the side would have run, from PERFGATE_WORKER_COMMAND.
        db = os.path.join(self.tmp.name, "wrapper.db")
        marks = os.path.join(self.tmp.name, "wrapper-marks")
        os.makedirs(marks)
        wrapper = 'echo "$PERFGATE_WORKER_COMMAND" >"%s/$0" && exec sh -c "$PERFGATE_WORKER_COMMAND"'
        r = self.ab("base-a", "base-b", db,
                    extra=["--base-worker", "sh -c '%s' base" % (wrapper % marks),
                           "--head-worker", "sh -c '%s' head" % (wrapper % marks)])
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        for side in ("base", "head"):
            with open(os.path.join(marks, side)) as f:
                self.assertEqual(f.read().strip(), "python3 bench.py")
        for run in self.runs(db):
            self.assertEqual([c["status"] for c in run["cells"]], ["ok", "ok"], run["ab"])
            self.assertEqual(len(run["cells"][0]["samples"]["prefill_ms"]), 12)

    def test_every_worker_gets_a_placement_seed_of_its_own_ab_run_and_side(self):
        # docs/AB.md, "Placement": the seed is what makes each opening of a cell land elsewhere
        # in device memory; two workers sharing one would repeat one placement's bias.
        marks = os.path.join(self.tmp.name, "seed-marks")
        os.makedirs(marks)
        wrapper = ('echo "$0 ${PERFGATE_PLACEMENT_SEED-unset}" >>"%s/seeds" && '
                   'exec sh -c "$PERFGATE_WORKER_COMMAND"') % marks
        workers = ["--base-worker", "sh -c '%s' base" % wrapper,
                   "--head-worker", "sh -c '%s' head" % wrapper]
        r = self.ab("base-a", "base-b", os.path.join(self.tmp.name, "seeds.db"), ab_runs="3",
                    extra=workers)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        with open(os.path.join(marks, "seeds")) as f:
            spawned = [line.split() for line in f.read().splitlines()]
        # The --exec benchmark serves one cell a process: 2 cells x 3 A/B runs x 2 sides.
        self.assertEqual(len(spawned), 12, spawned)
        by_side = {side: {seed for s, seed in spawned if s == side} for side in ("base", "head")}
        self.assertEqual(len(by_side["base"]), 3, spawned)  # one per A/B run
        self.assertEqual(len(by_side["head"]), 3, spawned)
        self.assertFalse(by_side["base"] & by_side["head"], spawned)
        self.assertTrue(all(seed.isdigit() for _, seed in spawned), spawned)

        os.remove(os.path.join(marks, "seeds"))
        r = self.ab("base-a", "base-b", os.path.join(self.tmp.name, "fixed.db"),
                    extra=[*workers, "--placement", "fixed"])
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        with open(os.path.join(marks, "seeds")) as f:
            self.assertEqual({line.split()[1] for line in f.read().splitlines()}, {"unset"})

    def test_killing_perfgate_kills_both_workers(self):
        db = os.path.join(self.tmp.name, "kill.db")
        pid_dir = tempfile.mkdtemp(dir=self.tmp.name)
        proc = subprocess.Popen(
            [PERFGATE, "ab", "--base", self.checkouts["base-a"], "--head",
             self.checkouts["base-b"], "--exec", "python3 bench.py", "--model", "spin",
             "--device", "cpu", "--batch-sizes", "1", "--seq-lens", "8", "--gen-tokens", "6",
             "--warmup", "0", "--reps", "1000", "--profile", "off", "--db", db],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "AB_TEST_PID_DIR": pid_dir, "AB_TEST_SLOW": "1"})
        deadline = time.monotonic() + 120
        while len(os.listdir(pid_dir)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = [int(p) for p in os.listdir(pid_dir)]
        self.assertEqual(len(pids), 2, "both workers started")
        proc.send_signal(signal.SIGKILL)
        proc.wait()

        def alive(pid):  # a zombie nobody has reaped yet is dead too
            try:
                with open(f"/proc/{pid}/stat") as f:
                    return f.read().rsplit(")", 1)[1].split()[0] != "Z"
            except FileNotFoundError:
                return False

        deadline = time.monotonic() + 30
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse([p for p in pids if alive(p)], "a worker outlived perfgate")


if __name__ == "__main__":
    PERFGATE = os.path.abspath(sys.argv.pop(1))
    unittest.main()
