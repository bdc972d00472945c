#!/usr/bin/env python3
"""Does a decode program compiled for a static T = 1 close the gap between an AOTInductor
package and torch.compile? torch.compile specialises the decode call on T = 1 (sizes 0 and 1 are
always specialised); perfgate's reference exporter compiles one program over a symbolic T.

    decode_program_probe.py export CONFIG OUT.pt2 dynamic|static    # export one package
    decode_program_probe.py time OUT.json P G REPS PKG...             # time each package's decode

Both packages come from the same model as bench/own_model/hf_static.py builds it (and
python/export_hf.py packages). `time` loads each package single-threaded, captures one decode
call (and the argmax that feeds the next) in a CUDA graph and times G - 1 replays per repetition
with CUDA events; also without the graph. Prints JSON."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_static  # noqa: E402
import kernel_breakdown as kb  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM  # noqa: E402


def export(cfg_path, out, mode):
    cfg = hf_static.load_config(cfg_path)
    cfg.pop("context", None)
    model_type = cfg.pop("model_type", "llama")
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = transformers.AutoModelForCausalLM.from_config(
            transformers.AutoConfig.for_model(model_type, **cfg), dtype=torch.bfloat16)
    model = model.eval()
    model.generation_config.cache_implementation = "static"
    ex = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=1024,
                                               device=torch.device("cuda"))
    t0 = time.time()
    with torch.no_grad():
        if mode == "dynamic":
            T = torch.export.Dim("T", min=1, max=1023)
            tok = torch.zeros(1, 2, dtype=torch.long, device="cuda")
            pos = torch.arange(2, device="cuda")
            ep = ex.export(input_ids=tok, cache_position=pos,
                           dynamic_shapes={"input_ids": {1: T}, "cache_position": {0: T}})
        else:
            tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
            pos = torch.zeros(1, dtype=torch.long, device="cuda")
            ep = ex.export(input_ids=tok, cache_position=pos)
    t1 = time.time()
    torch._inductor.aoti_compile_and_package(ep, package_path=out)
    print(f"{out}: {mode} export {t1 - t0:.1f} s, compile {time.time() - t1:.1f} s", file=sys.stderr)


def time_package(path, P, G, reps, graphs):
    from torch._inductor.package import load_package
    loader = load_package(path, run_single_threaded=True).loader
    tok = torch.zeros(1, 1, dtype=torch.long, device="cuda")
    pos = torch.full((1,), P, dtype=torch.long, device="cuda")

    def step():
        logits = loader.run([tok, pos])[0]
        tok.copy_(logits[:, -1].argmax(-1, keepdim=True))

    if graphs:
        result = kb.tpot(kb.capture(step), pos, P, G, reps)
    else:
        for _ in range(3):
            step()
        result = kb.tpot(step, pos, P, G, reps)
    del loader
    return {**result, "n": reps}


def main():
    if sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    out, P, G, reps = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    res = {"torch": torch.__version__, "prompt_len": P, "gen_tokens": G, "reps": reps}
    with torch.no_grad():
        for rnd in range(2):  # two interleaved rounds: the clocks' drift shows as their spread
            for pkg in sys.argv[6:]:
                for graphs in (True, False):
                    key = f"{os.path.basename(pkg)} graphs={'on' if graphs else 'off'} round {rnd + 1}"
                    res[key] = time_package(pkg, P, G, reps, graphs)
                    print(key, res[key], file=sys.stderr)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
