"""The benchmark perfgate runs for every sweep cell (`exec` in perf/sweep.toml).

perfgate_bench is perfgate's helper (python/perfgate_bench.py; one file, standard library only):
it reads the cell, times prefill and each decode step, and prints perfgate's protocol. In CI the
action puts the pinned perfgate's copy first on PYTHONPATH; by hand, put perfgate's python/ there.
"""

import os
import sys

import torch

try:
    import perfgate_bench as pb
except ImportError:  # inside perfgate's own repository: the helper's original
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import perfgate_bench as pb
from model import TinyLM

cell = pb.cell()
torch.manual_seed(cell.seed)
torch.set_num_threads(1)  # one core: steadier timings on a shared CI machine
dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[cell.dtype]
model = TinyLM().to(cell.device, dtype).eval()
model.allocate_cache(cell.batch_size, cell.prompt_len + cell.gen_tokens)
prompt = torch.tensor(pb.random_prompt(cell, model.vocab), device=cell.device)
state = {}


@torch.inference_mode()
def prefill():
    state["next"] = model(prompt, 0)[:, -1:].argmax(-1)


@torch.inference_mode()
def decode_step(i):
    state["next"] = model(state["next"], cell.prompt_len + i)[:, -1:].argmax(-1)


pb.run(cell, prefill, decode_step, engine="pytorch-eager",
       model_info=model.facts(torch.finfo(dtype).bits // 8))
