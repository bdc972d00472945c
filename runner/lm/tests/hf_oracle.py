"""Oracle for the GPT-2 safetensors loader: a tiny random Hugging Face GPT2LMHeadModel.

Writes, under OUT_DIR:
  lm_head_model/  model.safetensors + config.json, as GPT2LMHeadModel.save_pretrained writes
                  them (names with the "transformer." prefix, lm_head tied and left out)
  base_model/     the same weights saved from GPT2Model (names without a prefix, like the Hub's
                  openai-community/gpt2)
  expected.safetensors  tokens [2, T] (I64), the model's logits [2, T, V] (F32) and its greedy
                  continuation of tokens[:, :PROMPT] with its KV cache, GEN tokens (I64)
Usage: hf_oracle.py OUT_DIR
"""
import pathlib
import sys

import torch
from safetensors.torch import save_file
from transformers import GPT2Config, GPT2LMHeadModel

PROMPT, GEN = 5, 8


def main(out: pathlib.Path) -> None:
    torch.manual_seed(1234)
    cfg = GPT2Config(n_layer=2, n_head=4, n_embd=64, vocab_size=1000, n_positions=128,
                     bos_token_id=None, eos_token_id=None)
    model = GPT2LMHeadModel(cfg).eval()
    # Perturb every parameter (norms and biases too), so that a transposed or swapped tensor
    # changes the logits well past the tolerance. Strong positions and weak token embeddings
    # keep the tied head from simply repeating the last token, so the greedy continuation
    # depends on the positions the KV cache must get right.
    scale = {"wte.weight": 0.05, "wpe.weight": 0.5}
    with torch.no_grad():
        for name, p in model.named_parameters():
            short = name.split(".", 1)[1] if name.startswith("transformer.") else name
            if short.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.copy_(1 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(scale.get(short, 0.2) * torch.randn_like(p))
    model.save_pretrained(out / "lm_head_model", safe_serialization=True)
    model.transformer.save_pretrained(out / "base_model", safe_serialization=True)

    tokens = torch.randint(0, cfg.vocab_size, (2, 11))
    with torch.no_grad():
        logits = model(input_ids=tokens).logits.float()
        greedy = model.generate(tokens[:, :PROMPT], max_new_tokens=GEN, do_sample=False,
                                use_cache=True, pad_token_id=0)[:, PROMPT:]
    save_file({"tokens": tokens.contiguous(), "logits": logits.contiguous(),
               "greedy": greedy.contiguous()}, str(out / "expected.safetensors"))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
