"""A small decoder-only Transformer with its own static KV cache, written to perfgate's
AOTInductor contract (see perfgate_export.py): the reference module of export_module.py, used by
perfgate's tests and as a template for your own model.

`slow=True` adds an unfused, recomputed attention softmax path (the kind of change a code review
can miss), so that a gate test has a genuinely slower model with the same weights.
"""
import math

import torch
import torch.nn.functional as F


class Block(torch.nn.Module):
    def __init__(self, d, heads, batch, context, slow):
        super().__init__()
        self.heads, self.slow = heads, slow
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)
        shape = (batch, heads, context, d // heads)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=True)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=True)

    def forward(self, x, positions, mask):
        B, T, D = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.heads, D // self.heads).transpose(1, 2) for t in (q, k, v))
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        if self.slow:  # the same result through an explicit, float64 softmax
            s = (q.double() @ self.k_cache.double().transpose(-1, -2)) / math.sqrt(D // self.heads)
            a = (s.masked_fill(~mask, float("-inf")).softmax(-1) @ self.v_cache.double()).to(x.dtype)
        else:
            a = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc(self.norm2(x))))


class TinyKVLM(torch.nn.Module):
    def __init__(self, vocab=512, d=64, heads=4, layers=2, batch=1, context=128, slow=False):
        super().__init__()
        self.context = context
        self.embed = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d, heads, batch, context, slow) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(d)
        self.head = torch.nn.Linear(d, vocab, bias=False)

    def forward(self, tokens, positions):
        # Query t sees cache slots 0..positions[t]; later slots hold stale or no values.
        mask = torch.arange(self.context, device=tokens.device)[None, :] <= positions[:, None]
        x = self.embed(tokens)
        for b in self.blocks:
            x = b(x, positions, mask)
        return self.head(self.norm(x))


def make_model(batch=1, context=128, slow=False, **kw):
    return TinyKVLM(batch=batch, context=context, slow=slow, **kw)
