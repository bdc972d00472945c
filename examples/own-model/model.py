"""A small decoder-only language model with a static KV cache: the kind of model code a team
gates with perfgate. Plain PyTorch, no other dependency.

The cache is a pair of registered buffers per layer, sized for the longest sequence up front and
written in place, so prefill is forward(tokens[B, P], pos=0) and each decode step is
forward(tokens[B, 1], pos=P + i).

`pos` may also be a tensor of the new tokens' positions: then the cache is written at those
positions and read whole under a mask, with shapes that do not depend on the position, which is
what export.py compiles ahead of time (perfgate's AOTInductor contract, docs/OWN_MODEL_AOTI.md).
"""

import torch
from torch import nn
from torch.nn import functional as F

N_LAYER = 2  # a pull request that raises this makes the model genuinely slower


class Attention(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.n_head, self.head_dim = n_head, d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.register_buffer("k_cache", torch.empty(0), persistent=False)
        self.register_buffer("v_cache", torch.empty(0), persistent=False)

    def allocate_cache(self, batch, max_len):
        w = self.qkv.weight
        shape = (batch, self.n_head, max_len, self.head_dim)
        self.k_cache = torch.zeros(shape, dtype=w.dtype, device=w.device)
        self.v_cache = torch.zeros(shape, dtype=w.dtype, device=w.device)

    def forward(self, x, pos):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, self.head_dim).transpose(1, 2) for t in (q, k, v))
        if torch.is_tensor(pos):  # positions [T]: the exported program's static shapes
            self.k_cache.index_copy_(2, pos, k)
            self.v_cache.index_copy_(2, pos, v)
            mask = torch.arange(self.k_cache.shape[2], device=x.device)[None, :] <= pos[:, None]
            y = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
            return self.out(y.transpose(1, 2).reshape(B, T, C))
        self.k_cache[:, :, pos:pos + T] = k
        self.v_cache[:, :, pos:pos + T] = v
        keys, values = self.k_cache[:, :, :pos + T], self.v_cache[:, :, :pos + T]
        # Causal within the new tokens; every cached position before them is visible.
        mask = torch.ones(T, pos + T, dtype=torch.bool, device=x.device).tril(diagonal=pos)
        y = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = Attention(d_model, n_head)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, x, pos):
        x = x + self.attn(self.ln1(x), pos)
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab=2048, d_model=256, n_head=4, n_layer=N_LAYER, context=1024):
        super().__init__()
        self.vocab, self.context = vocab, context
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(context, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def allocate_cache(self, batch, max_len):
        for b in self.blocks:
            b.attn.allocate_cache(batch, max_len)

    def forward(self, tokens, pos):
        T = tokens.shape[1]
        where = pos if torch.is_tensor(pos) else torch.arange(pos, pos + T, device=tokens.device)
        x = self.wte(tokens) + self.wpe(where)
        for b in self.blocks:
            x = b(x, pos)
        return self.lm_head(self.ln_f(x))

    def facts(self, dtype_bytes):
        """What perfgate's MBU/MFU columns need (the hello line's model object)."""
        params = sum(p.numel() for p in self.parameters())
        d = self.wte.embedding_dim
        return {
            "display_name": "TinyLM %d layers" % len(self.blocks),
            "param_bytes": params * dtype_bytes,
            "flops_per_token": 2 * (params - self.wpe.weight.numel()),
            "kv_bytes_per_token": 2 * len(self.blocks) * d * dtype_bytes,
            "vocab": self.vocab,
            "context": self.context,
        }


def cache_matches_recompute():
    """Prefill plus cached decode steps give the logits of one pass over the whole sequence."""
    torch.manual_seed(0)
    m = TinyLM().eval()
    seq = torch.randint(m.vocab, (2, 12))
    with torch.no_grad():
        m.allocate_cache(2, 12)
        ref = m(seq, 0)[:, 8:]
        m.allocate_cache(2, 12)
        m(seq[:, :8], 0)
        got = torch.cat([m(seq[:, 8 + i:9 + i], 8 + i) for i in range(4)], dim=1)
    return torch.allclose(got, ref, atol=1e-4)


def positions_match_ints():
    """The tensor-positions path (what export.py compiles) decodes what the int path decodes."""
    torch.manual_seed(0)
    m = TinyLM().eval()
    seq = torch.randint(m.vocab, (2, 12))
    with torch.no_grad():
        m.allocate_cache(2, 12)
        ref = torch.cat([m(seq[:, :8], 0)] + [m(seq[:, 8 + i:9 + i], 8 + i) for i in range(4)], 1)
        m.allocate_cache(2, 12)
        got = torch.cat([m(seq[:, :8], torch.arange(8))] +
                        [m(seq[:, 8 + i:9 + i], torch.tensor([8 + i])) for i in range(4)], 1)
    return torch.allclose(got, ref, atol=1e-4)


if __name__ == "__main__":
    print("cache matches recompute:", cache_matches_recompute())
    print("tensor positions match int positions:", positions_match_ints())
