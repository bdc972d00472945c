"""Peer: a hand-written PyTorch GPT-2 with a static KV cache (gpt-fast style), in three modes:
eager ATen kernels, the decode step captured in a CUDA graph, and torch.compile(reduce-overhead).

Decode is timed with one pair of CUDA events around the gen_tokens-1 steps of a repetition; median
over --reps after 3 warm-ups.
One JSON line per (model, batch, mode) on stdout. Run on a GPU machine:
    python3 bench/peers/torch_peer.py --models gpt2,gpt2-xl --batch-sizes 1 --modes eager,cudagraph,compile
"""
import argparse, json, statistics, time

import torch, torch.nn as nn, torch.nn.functional as F

SHAPES = {"gpt2": (12, 12, 768), "gpt2-medium": (24, 16, 1024), "gpt2-large": (36, 20, 1280),
          "gpt2-xl": (48, 25, 1600)}


class Block(nn.Module):
    def __init__(s, d, h, B, L):
        super().__init__()
        s.h = h
        s.ln1, s.qkv, s.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        s.ln2, s.fc, s.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        s.register_buffer("k", torch.zeros(B, h, L, d // h))
        s.register_buffer("v", torch.zeros(B, h, L, d // h))

    def forward(s, x, pos, mask):
        B, T, C = x.shape
        q, k, v = s.qkv(s.ln1(x)).split(C, dim=2)
        q, k, v = [t.view(B, T, s.h, C // s.h).transpose(1, 2) for t in (q, k, v)]
        s.k.index_copy_(2, pos, k)
        s.v.index_copy_(2, pos, v)
        y = F.scaled_dot_product_attention(q, s.k, s.v, attn_mask=mask)
        x = x + s.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + s.fc2(F.gelu(s.fc(s.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(s, nl, nh, d, B, L, V=50257):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, d), nn.Embedding(1024, d)
        s.blocks = nn.ModuleList([Block(d, nh, B, L) for _ in range(nl)])
        s.lnf = nn.LayerNorm(d)
        s.register_buffer("causal", torch.tril(torch.ones(L, L, dtype=torch.bool)))

    def forward(s, idx, pos):
        x = s.wte(idx) + s.wpe(pos)
        mask = s.causal.index_select(0, pos)
        for b in s.blocks:
            x = b(x, pos, mask)
        return (s.lnf(x[:, -1:, :]) @ s.wte.weight.t()).argmax(-1)


def ev():
    return torch.cuda.Event(enable_timing=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="gpt2,gpt2-xl")
    ap.add_argument("--batch-sizes", default="1")
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--gen-tokens", type=int, default=32)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--modes", default="eager,cudagraph,compile")
    a = ap.parse_args()
    torch.manual_seed(0)
    dev, dt, P, N = "cuda", torch.bfloat16, a.seq_len, a.gen_tokens
    modes = a.modes.split(",")
    for name in a.models.split(","):
        for B in [int(b) for b in a.batch_sizes.split(",")]:
            nl, nh, nd = SHAPES[name]
            m = GPT(nl, nh, nd, B, P + N).to(dev, dt).eval()
            prompt = torch.randint(0, 50257, (B, P), device=dev)

            @torch.inference_mode()
            def decode(step):
                out = []
                for r in range(a.reps + 3):
                    tok = m(prompt, torch.arange(P, device=dev))
                    s, e = ev(), ev()
                    s.record()
                    for i in range(N - 1):
                        tok = step(tok, torch.tensor([P + i], device=dev))
                    e.record()
                    torch.cuda.synchronize()
                    if r >= 3:
                        out.append(s.elapsed_time(e) / (N - 1))
                return out

            res = {}
            if "eager" in modes:
                res["torch-eager"] = decode(lambda t, p: m(t, p))
            if "cudagraph" in modes:
                with torch.inference_mode():
                    st_tok = torch.zeros(B, 1, dtype=torch.long, device=dev)
                    st_pos = torch.tensor([P], device=dev)
                    sst = torch.cuda.Stream()
                    sst.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(sst):
                        for _ in range(3):
                            m(st_tok, st_pos)
                    torch.cuda.current_stream().wait_stream(sst)
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        st_out = m(st_tok, st_pos)

                def gstep(t, p):
                    st_tok.copy_(t)
                    st_pos.copy_(p)
                    g.replay()
                    return st_out.clone()

                res["torch-cudagraph"] = decode(gstep)
            if "compile" in modes:
                t0 = time.time()
                cm = torch.compile(m, mode="reduce-overhead", fullgraph=True)

                def cstep(t, p):
                    torch.compiler.cudagraph_mark_step_begin()
                    return cm(t, p).clone()

                try:
                    res["torch-compile"] = decode(cstep)
                except Exception as ex:  # report, don't hide
                    print(json.dumps(dict(peer="torch-compile", model=name, error=repr(ex)[:300])))
            for k, v in res.items():
                print(json.dumps(dict(peer=k, model=name, dtype="bf16", batch_size=B, seq_len=P,
                                      tpot_ms=statistics.median(v),
                                      cv=statistics.pstdev(v) / statistics.mean(v),
                                      torch=torch.__version__)), flush=True)
            del m
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
