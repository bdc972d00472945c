"""python/perfgate_tuning.py: every export compiles in a fresh Inductor cache, records what it
generated and chose (PATH.tuning.json and the sidecar's "export" object), and replays another
export's choices when given them; a choices file it cannot replay is refused naming the file.

    perfgate_tuning_test.py   (the venv's Python, which has torch)
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import perfgate_export as pe  # noqa: E402
import perfgate_tuning as tuning  # noqa: E402
import tiny_kv_lm  # noqa: E402


def export(out, tuning_from=None, slow=False):
    torch.manual_seed(0)
    model = tiny_kv_lm.make_model(batch=1, context=32, slow=slow)
    return pe.export_and_package(model, out=out, name="t", batch=1, context=32, dtype="fp32",
                                 device="cpu", exporter_versions={}, decode_program=False,
                                 tuning_from=tuning_from)["export"]


class Replay(unittest.TestCase):
    def test_a_replayed_export_names_the_choices_it_replayed_and_generates_the_same_kernels(self):
        with tempfile.TemporaryDirectory() as d:
            first = export(os.path.join(d, "a", "m.pt2"))
            self.assertFalse(first["tuned_options"])
            self.assertNotIn("replayed_from", first)
            with open(os.path.join(d, "a", "m.tuning.json")) as f:
                recorded = json.load(f)
            self.assertEqual(recorded["torch"], torch.__version__)
            # A folder is looked up by the package's own name, as the action hands it over.
            second = export(os.path.join(d, "b", "m.pt2"), tuning_from=os.path.join(d, "a"))
            self.assertEqual(second["replayed_from"], first["tuning_sha256"])
            self.assertGreater(first["kernels"], 0)
            for key in ("graph_sha256", "kernels_sha256", "kernels", "tuning_sha256"):
                self.assertEqual(first[key], second[key], key)
            self.assertNotEqual(os.environ.get("TORCHINDUCTOR_CACHE_DIR"), d)
            self.assertEqual(second["retuned_kernels"], 0)
            # Other code: another graph and other kernels, in the same process as the first two.
            slow = export(os.path.join(d, "c", "m.pt2"), tuning_from=os.path.join(d, "a"), slow=True)
            self.assertNotEqual(slow["graph_sha256"], first["graph_sha256"])
            self.assertNotEqual(slow["kernels_sha256"], first["kernels_sha256"])
            # The export A/A check: two prepares of one commit compared by their sidecars.
            self.assertEqual(tuning.compare_exports(os.path.join(d, "a"), os.path.join(d, "b")),
                             (True, [f"alike: m.pt2: the same {first['kernels']} kernels and "
                                     f"{first['tuned_kernels']} tuning choices"]))
            alike, lines = tuning.compare_exports(os.path.join(d, "a"), os.path.join(d, "c"))
            self.assertFalse(alike)
            self.assertRegex(lines[0], r"^differs: m\.pt2: graph_sha256 \w{12} vs \w{12}; "
                                       r"kernels_sha256 ")
            cli = [sys.executable, tuning.__file__, "compare-exports"]
            for pair, code in ((("a", "b"), 0), (("a", "c"), 1), (("a", "empty"), 1)):
                os.makedirs(os.path.join(d, "empty"), exist_ok=True)
                run = subprocess.run(cli + [os.path.join(d, p) for p in pair],
                                     capture_output=True, text=True)
                self.assertEqual(run.returncode, code, (pair, run.stdout, run.stderr))
            run = subprocess.run(cli + [os.path.join(d, "empty"), os.path.join(d, "empty")],
                                 capture_output=True, text=True)
            self.assertEqual((run.returncode, run.stdout.strip()),
                             (2, "not compared: prepare left no AOTInductor package (*.pt2)"))

    def test_a_sidecar_that_is_not_json_is_refused_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            for side in ("a", "b"):
                os.makedirs(os.path.join(d, side))
                open(os.path.join(d, side, "m.pt2"), "w").close()
                with open(os.path.join(d, side, "m.json"), "w") as f:
                    f.write("{not json")
            run = subprocess.run([sys.executable, tuning.__file__, "compare-exports",
                                  os.path.join(d, "a"), os.path.join(d, "b")],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 2)
            self.assertIn(os.path.join(d, "a", "m.json") + ": not a sidecar", run.stderr)

    def test_tuned_options_are_the_ones_that_benchmark_candidates(self):
        self.assertTrue(tuning.tuned({"coordinate_descent_tuning": True}))
        self.assertTrue(tuning.tuned({"max_autotune": True}))
        self.assertFalse(tuning.tuned({"coordinate_descent_tuning": False, "freezing": True}))


class Refusals(unittest.TestCase):
    def refused(self, body):
        with tempfile.NamedTemporaryFile("w", suffix=".tuning.json", delete=False) as f:
            f.write(body)
        with self.assertRaises(SystemExit) as e:
            tuning.read_choices(f.name, torch.__version__)
        os.unlink(f.name)
        self.assertIn(f.name, str(e.exception))
        return str(e.exception)

    def test_not_json(self):
        self.assertIn("not JSON", self.refused("{"))

    def test_another_torch_release(self):
        self.assertIn("torch 2.0.0", self.refused(json.dumps({"format": 1, "torch": "2.0.0", "choices": {}})))

    def test_an_entry_outside_the_cache(self):
        body = json.dumps({"format": 1, "torch": torch.__version__,
                           "choices": {"../../etc/x.best_config": {}}})
        self.assertIn("not a kernel's choice", self.refused(body))


if __name__ == "__main__":
    unittest.main()
