"""Render the GPU benchmark (bench/gpu_bench.sh OUTDIR) as Markdown for docs/PERFORMANCE.md.

Reads OUTDIR/gpu_runs.json (perfgate export), OUTDIR/peers.jsonl (the Python peers) and
OUTDIR/nvidia-smi.txt. Every number printed comes from those files; nothing is typed in here.
Usage: python3 bench/render_gpu.py OUTDIR
"""
import json, sys, os, datetime

out = sys.argv[1]
runs = json.load(open(os.path.join(out, "gpu_runs.json")))["runs"]
peers = [json.loads(l) for l in open(os.path.join(out, "peers.jsonl")) if l.startswith("{")]


def cells():
    """First stored cell of each key (sweeps later in the script repeat some keys)."""
    seen = {}
    for r in runs:
        for c in r["cells"]:
            k = json.dumps(c["key"], sort_keys=True)
            seen.setdefault(k, (r, c))
    return list(seen.values())


ALL = cells()


def find(**want):
    for r, c in ALL:
        if all(c["key"].get(k) == v for k, v in want.items()):
            return c
    return None


def peer(name, **want):
    for p in peers:
        if p.get("peer") == name and all(p.get(k) == v for k, v in want.items()) and "tpot_ms" in p:
            return p
    return None


def f(v, nd=3):
    return "—" if v is None else f"{v:.{nd}f}"


def m(c, name):
    return None if c is None or c.get("status") != "ok" else c["metrics"].get(name)


env = runs[0]["env"] if runs else {}
print(f"## GPU results ({datetime.date.today().isoformat()})\n")
print(f"Device: {env.get('device')} (cc {env.get('compute_capability')}), driver {env.get('driver')}, "
      f"CUDA {env.get('cuda')}, cuDNN {env.get('cudnn')}, LibTorch {env.get('torch')}; "
      f"peers: torch {next((p.get('torch') for p in peers), '?')}, "
      f"transformers {next((p.get('transformers') for p in peers if 'transformers' in p), '?')}.\n")
print("Command: `bench/gpu_bench.sh OUT all && python3 bench/render_gpu.py OUT`, "
      "on the lent H200 machine; every row below comes from that one session.\n")

print("### Seed matrix: gpt2, 32 new tokens, warm-up 3, 10 repetitions (eager, KV cache, SDPA)\n")
print("| dtype | B | P | prefill ms | tpot ms | decode tok/s | peak MiB | MBU | CV | HF tpot ms | HF / perfgate |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for dt in ("bf16", "fp32"):
    for b in (1, 4, 8, 16):
        for p in (64, 256, 512):
            c = find(model="gpt2", dtype=dt, batch_size=b, seq_len=p, kv_cache=True, cuda_graphs=False)
            h = peer("hf-eager", model="gpt2", dtype=dt, batch_size=b, seq_len=p)
            t = m(c, "tpot_ms")
            peak = m(c, "peak_alloc_bytes")
            ratio = (h["tpot_ms"] / t) if (h and t) else None
            print(f"| {dt} | {b} | {p} | {f(m(c,'prefill_ms'))} | {f(t)} | {f(m(c,'decode_tok_s'),0)} | "
                  f"{f(peak/2**20 if peak else None,0)} | {f(m(c,'mbu'),3)} | {f(m(c,'cv'),4)} | "
                  f"{f(h['tpot_ms'] if h else None)} | {f(ratio,2)}× |")

print("\n### Decode at batch 1, prompt 512, bf16: perfgate against the peers (tpot ms)\n")
print("| engine | gpt2 | CV | gpt2-xl | CV |")
print("|---|---|---|---|---|")
rows = [("perfgate, CUDA graph", lambda mo: find(model=mo, dtype="bf16", batch_size=1, seq_len=512, cuda_graphs=True, kv_cache=True)),
        ("perfgate, eager", lambda mo: find(model=mo, dtype="bf16", batch_size=1, seq_len=512, cuda_graphs=False, kv_cache=True))]
for name, get in rows:
    a, b = get("gpt2"), get("gpt2-xl")
    print(f"| {name} | {f(m(a,'tpot_ms'))} | {f(m(a,'cv'),4)} | {f(m(b,'tpot_ms'))} | {f(m(b,'cv'),4)} |")
for pname, label in [("torch-cudagraph", "hand-written PyTorch, CUDA graph"), ("torch-compile", "hand-written PyTorch, torch.compile reduce-overhead"),
                     ("torch-eager", "hand-written PyTorch, eager"), ("hf-compiled-generate", "transformers generate, static cache, compiled"),
                     ("hf-eager", "transformers, eager, its KV cache")]:
    a = peer(pname, model="gpt2", batch_size=1, seq_len=512, dtype="bf16")
    b = peer(pname, model="gpt2-xl", batch_size=1, seq_len=512, dtype="bf16")
    print(f"| {label} | {f(a and a['tpot_ms'])} | {f(a and a.get('cv'),4)} | {f(b and b['tpot_ms'])} | {f(b and b.get('cv'),4)} |")

print("\n### Every cell with CUDA graphs on/off (bf16, prompt 512)\n")
print("| model | B | graphs | prefill ms | tpot ms | itl p99 ms | MBU | prefill MFU | CV | status |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r, c in ALL:
    k = c["key"]
    if k["model"] in ("gpt2", "gpt2-xl") and k["seq_len"] == 512 and k["dtype"] == "bf16" and k["batch_size"] in (1, 16) and k["kv_cache"]:
        print(f"| {k['model']} | {k['batch_size']} | {'on' if k['cuda_graphs'] else 'off'} | {f(m(c,'prefill_ms'))} | {f(m(c,'tpot_ms'))} | "
              f"{f(m(c,'itl_p99_ms'))} | {f(m(c,'mbu'))} | {f(m(c,'prefill_mfu'))} | {f(m(c,'cv'),4)} | {c['status']} |")

print("\n### cs336 presets (bf16, prompt 512, eager)\n")
print("| model | B | prefill ms | tpot ms | decode tok/s | MBU | prefill MFU | CV |")
print("|---|---|---|---|---|---|---|---|")
for mo in ("cs336-small", "cs336-medium", "cs336-large", "cs336-xl"):
    for b in (1, 16):
        c = find(model=mo, batch_size=b, seq_len=512)
        print(f"| {mo} | {b} | {f(m(c,'prefill_ms'))} | {f(m(c,'tpot_ms'))} | {f(m(c,'decode_tok_s'),0)} | {f(m(c,'mbu'))} | {f(m(c,'prefill_mfu'))} | {f(m(c,'cv'),4)} |")

print("\n### KV cache on/off (gpt2 bf16, the seeds' contrast)\n")
print("| B | P | tpot ms, cache on | tpot ms, cache off | off / on |")
print("|---|---|---|---|---|")
for b in (1, 16):
    for p in (64, 512):
        on = m(find(model="gpt2", dtype="bf16", batch_size=b, seq_len=p, kv_cache=True, cuda_graphs=False), "tpot_ms")
        off = m(find(model="gpt2", dtype="bf16", batch_size=b, seq_len=p, kv_cache=False, cuda_graphs=False), "tpot_ms")
        print(f"| {b} | {p} | {f(on)} | {f(off)} | {f(off/on if on and off else None,1)}× |")

aa = os.path.join(out, "aa_compare.md")
if os.path.exists(aa):
    print("\n### Sensitivity: the seed sweep twice at one commit, `perfgate compare --min-effect 0.01`\n")
    print(open(aa).read())
