"""A small Qwen2-architecture causal LM built from a config in code (random init), saved as an HF model dir."""

from __future__ import annotations

import json
from pathlib import Path

# Qwen2 shapes for the learning check. "nano" is for CPU tests only (it learns nothing useful).
SHAPES: dict[str, dict] = {
    "nano": dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                 num_key_value_heads=1),
    "tiny": dict(hidden_size=128, intermediate_size=344, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2),
    "small": dict(hidden_size=256, intermediate_size=688, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=2),
    "base": dict(hidden_size=384, intermediate_size=1024, num_hidden_layers=6, num_attention_heads=6,
                 num_key_value_heads=2),
}


def build_model(tokenizer, shape: str = "small", seed: int = 0, max_positions: int = 1024):
    """A randomly initialised Qwen2ForCausalLM sized by SHAPES[shape], vocab = the tokenizer's."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    if shape not in SHAPES:
        raise ValueError(f"unknown model shape {shape!r}; known: {', '.join(SHAPES)}")
    cfg = Qwen2Config(vocab_size=len(tokenizer), max_position_embeddings=max_positions, rope_theta=10000.0,
                      tie_word_embeddings=True, bos_token_id=None, eos_token_id=tokenizer.eos_token_id,
                      pad_token_id=tokenizer.pad_token_id, torch_dtype="float32", **SHAPES[shape])
    torch.manual_seed(seed)
    return Qwen2ForCausalLM(cfg)


def n_params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def save_model(model, tokenizer, out_dir: str | Path) -> None:
    """Weights (safetensors), config, tokenizer and a generation config whose EOS is the chat turn's end."""
    out = Path(out_dir)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    # OpenRLHF and HF generate stop at eos; without this file generate() falls back to config defaults.
    (out / "generation_config.json").write_text(json.dumps(
        {"eos_token_id": tokenizer.eos_token_id, "pad_token_id": tokenizer.pad_token_id, "do_sample": True}) + "\n")
