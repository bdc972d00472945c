"""python/perfgate_tuning.py: every export compiles in a fresh Inductor cache, records what it
generated and chose (PATH.tuning.json and the sidecar's "export" object), and replays another
export's choices when given them; a choices file it cannot replay is refused naming the file.

    perfgate_tuning_test.py   (the venv's Python, which has torch)
"""

import json
import os
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
