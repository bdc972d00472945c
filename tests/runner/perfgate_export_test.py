"""python/perfgate_export.py refuses a module that breaks the AOTInductor contract before it
compiles anything, in the model author's terms (docs/OWN_MODEL_AOTI.md, "The contract"):
a KV cache sized for another batch or context (kv_bytes_per_token, and MBU with it, would be
wrong by that factor), and a shape that depends on a position value (torch.export's
GuardOnDataDependentSymNode). A module that keeps the contract gets past both checks, and the
KV bytes the sidecar states are those of the buffers the exported program writes.

    perfgate_export_test.py   (the venv's Python, which has torch)
"""

import os
import sys
import unittest

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import perfgate_export as pe  # noqa: E402
import tiny_kv_lm  # noqa: E402


class SlicedCacheLM(torch.nn.Module):
    """Written without perfgate in mind: the common cache slice up to the last position."""

    def __init__(self, batch, context, d=16, vocab=64):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        self.head = torch.nn.Linear(d, vocab)
        self.register_buffer("k", torch.zeros(batch, 1, context, d))

    def forward(self, tokens, positions):
        x = self.embed(tokens)
        B = x.shape[0]
        self.k.index_copy_(2, positions, x[:, None])
        L = positions[-1] + 1
        a = F.scaled_dot_product_attention(x[:, None], self.k[:B, :, :L], self.k[:B, :, :L])
        return self.head(a[:, 0])


def package(module, tmp, batch, context):
    return pe.export_and_package(module, out=os.path.join(tmp, "m.pt2"), name="m", batch=batch,
                                 context=context, dtype="fp32", device="cpu",
                                 exporter_versions={}, decode_program=False)


class Contract(unittest.TestCase):
    def setUp(self):
        import tempfile
        self.tmp = tempfile.mkdtemp()

    def test_a_cache_sized_for_another_context_is_refused_naming_the_buffer(self):
        model = tiny_kv_lm.make_model(batch=1, context=4096).eval()  # the factory's default max
        with self.assertRaises(pe.ContractError) as e:
            package(model, self.tmp, batch=1, context=64)
        msg = str(e.exception)
        self.assertIn("k_cache", msg)
        self.assertIn("4096", msg)
        self.assertIn("context 64", msg)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "m.pt2")), "nothing compiled")

    def test_a_cache_sized_for_another_batch_is_refused(self):
        model = tiny_kv_lm.make_model(batch=8, context=64).eval()
        with self.assertRaises(pe.ContractError) as e:
            package(model, self.tmp, batch=1, context=64)
        self.assertIn("batch 1", str(e.exception))

    def test_a_shape_that_depends_on_a_position_value_is_explained(self):
        with self.assertRaises(pe.ContractError) as e:
            package(SlicedCacheLM(batch=1, context=32).eval(), self.tmp, batch=1, context=32)
        msg = str(e.exception)
        self.assertIn("depend on the value of `positions`", msg)
        self.assertIn("index_copy_", msg)
        self.assertIn("torch.export said", msg)

    def test_the_contract_kept_passes_the_checks_and_kv_bytes_come_from_the_program(self):
        model = tiny_kv_lm.make_model(batch=1, context=16, layers=1, d=16, heads=2, vocab=32)
        exported = []

        def export(tokens, positions, T):  # export only: compiling is another test's business
            ep = torch.export.export(model, (tokens, positions),
                                     dynamic_shapes=({1: T}, {0: T}) if T is not None else None,
                                     strict=False)
            exported.append(ep)
            raise StopIteration

        with self.assertRaises(StopIteration):
            pe.export_and_package(model.eval(), out=os.path.join(self.tmp, "m.pt2"), name="m",
                                  batch=1, context=16, dtype="fp32", device="cpu",
                                  exporter_versions={}, decode_program=False, export=export)
        cache = sum(b.numel() * b.element_size() for n, b in model.named_buffers() if "cache" in n)
        self.assertEqual(pe.mutated_buffer_bytes(model, exported[0]), cache)


if __name__ == "__main__":
    unittest.main(verbosity=2)
