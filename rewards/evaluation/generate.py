"""Sample completions from a checkpoint with the prompts training used: vLLM when it imports, else HF generate.

The prompt of a row is ``tokenizer.apply_chat_template(row["input"], tokenize=False,
add_generation_prompt=True)``, tokenized with ``add_special_tokens=False`` -- the text and the ids
OpenRLHF 0.5.7 builds with ``--input_key input --apply_chat_template`` (datasets/prompts_dataset.py,
experience_maker.tokenize_fn). Responses keep special tokens (``skip_special_tokens=False``, as OpenRLHF
decodes them for the reward) and end before the first EOS; the scorer strips them as the reward does.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from . import prefill

log = logging.getLogger("coderl.evaluate")

BACKENDS = ("auto", "vllm", "hf")


@dataclass(frozen=True)
class SamplingConfig:
    n: int = 10
    temperature: float = 1.0
    top_p: float = 1.0
    max_new_tokens: int = 1024
    seed: int = 42
    batch_size: int = 16  # sequences per HF generate() call (vLLM schedules its own batches)
    tensor_parallel_size: int = 1  # vLLM only

    def check(self) -> None:
        """ValueError naming the flag that is out of range."""
        if self.n < 1:
            raise ValueError(f"--n must be at least 1, got {self.n}")
        if self.temperature < 0:
            raise ValueError(f"--temperature must be >= 0, got {self.temperature}")
        if self.temperature == 0 and self.n > 1:
            raise ValueError("--temperature 0 is greedy decoding: every one of the --n samples would be the same; "
                             "use --n 1, or a temperature > 0 for pass@k with k > 1")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"--top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ValueError(f"--max_new_tokens must be at least 1, got {self.max_new_tokens}")
        if self.batch_size < 1 or self.tensor_parallel_size < 1:
            raise ValueError("--batch_size and --tensor_parallel_size must be at least 1")


def choose_backend(name: str) -> str:
    """'vllm' or 'hf': auto picks vLLM when it imports (a broken install falls back to HF, with a warning)."""
    if name not in BACKENDS:
        raise ValueError(f"--backend must be one of {BACKENDS}, got {name!r}")
    if name != "auto":
        return name
    try:
        import vllm  # noqa: F401
    except ImportError:
        return "hf"
    except Exception as e:  # vLLM present but broken (CUDA mismatch, ...): still evaluate, slower
        log.warning("vllm is installed but does not import (%s: %s); sampling with HF generate instead",
                    type(e).__name__, e)
        return "hf"
    return "vllm"


def render_prompts(tokenizer, messages: Sequence[list | str]) -> list[str]:
    """The training prompt text of each row's "input" (a bare string is one user message, as in OpenRLHF)."""
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("the tokenizer has no chat template; training applied one (--apply_chat_template), so "
                         "the evaluation needs the same (add chat_template to tokenizer_config.json)")
    out = []
    for m in messages:
        chat = [{"role": "user", "content": m}] if isinstance(m, str) else m
        out.append(tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True))
    return out


def encode_prompts(tokenizer, prompts: Sequence[str]) -> list[list[int]]:
    """Token ids as OpenRLHF's tokenize_fn makes them: the chat template already holds any BOS."""
    return [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]


def _eos_ids(model, tokenizer) -> set[int]:
    ids = {tokenizer.eos_token_id}
    gen = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids.update(gen if isinstance(gen, (list, tuple)) else [gen])
    return {i for i in ids if i is not None}


def generate_hf(model, tokenizer, prompt_ids: Sequence[list[int]], cfg: SamplingConfig,
                progress: bool = False) -> list[list[str]]:
    """cfg.n responses per prompt with transformers' generate(), left-padded batches of cfg.batch_size."""
    import torch
    from tqdm import tqdm
    from transformers import GenerationConfig

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos = _eos_ids(model, tokenizer)
    device = next(model.parameters()).device
    requests = [i for i in range(len(prompt_ids)) for _ in range(cfg.n)]
    out: list[list[str]] = [[] for _ in prompt_ids]
    # A fresh GenerationConfig, not the checkpoint's generation_config.json (Qwen2.5-Instruct's sets top_k=20
    # and repetition_penalty=1.05): training samples with vLLM, which ignores that file.
    sample = cfg.temperature > 0
    gen = GenerationConfig(do_sample=sample, max_new_tokens=cfg.max_new_tokens, pad_token_id=pad,
                           eos_token_id=sorted(eos) or None,
                           **({"temperature": cfg.temperature, "top_p": cfg.top_p, "top_k": 0} if sample else {}))
    torch.manual_seed(cfg.seed)
    model.eval()
    with tqdm(total=len(requests), unit="sample", desc="generate", disable=not progress, file=sys.stderr) as bar:
        for start in range(0, len(requests), cfg.batch_size):
            batch = requests[start:start + cfg.batch_size]
            width = max(len(prompt_ids[i]) for i in batch)
            ids = torch.tensor([[pad] * (width - len(prompt_ids[i])) + prompt_ids[i] for i in batch], device=device)
            mask = torch.tensor([[0] * (width - len(prompt_ids[i])) + [1] * len(prompt_ids[i]) for i in batch],
                                device=device)
            with torch.no_grad():
                seqs = prefill.generate(model, ids, mask, generation_config=gen)  # n rows share a prompt
            for i, row in zip(batch, seqs[:, width:].tolist(), strict=True):
                cut = next((j for j, t in enumerate(row) if t in eos), len(row))
                out[i].append(tokenizer.decode(row[:cut], skip_special_tokens=False))
            bar.update(len(batch))
    return out


def generate_vllm(model_path: str, prompt_ids: Sequence[list[int]], cfg: SamplingConfig) -> list[list[str]]:
    """cfg.n responses per prompt with vLLM (written against vLLM 0.6.0, the version setup_env.sh installs)."""
    from vllm import LLM, SamplingParams

    llm = LLM(model=model_path, seed=cfg.seed, tensor_parallel_size=cfg.tensor_parallel_size)
    params = SamplingParams(n=cfg.n, temperature=cfg.temperature, top_p=cfg.top_p, max_tokens=cfg.max_new_tokens,
                            skip_special_tokens=False)
    # Token-id prompts (TokensPrompt), as OpenRLHF passes them: vLLM would otherwise tokenize the text with
    # add_special_tokens=True and could add a second BOS.
    outputs = llm.generate([{"prompt_token_ids": list(ids)} for ids in prompt_ids], params)
    return [[c.text for c in o.outputs] for o in outputs]


def load_hf(model_path: str):
    """(model, tokenizer) from a checkpoint directory or hub name: bf16 on a GPU, fp32 on CPU."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    cuda = torch.cuda.is_available()
    model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.bfloat16 if cuda else torch.float32)
    return model.to("cuda" if cuda else "cpu"), tokenizer


def generate(model_path: str, messages: Sequence[list | str], cfg: SamplingConfig, backend: str = "auto",
             progress: bool = False) -> tuple[list[list[str]], str]:
    """(cfg.n responses per row, the backend used)."""
    cfg.check()
    backend = choose_backend(backend)
    if backend == "vllm":
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_path)
        ids = encode_prompts(tokenizer, render_prompts(tokenizer, messages))
        return generate_vllm(model_path, ids, cfg), backend
    model, tokenizer = load_hf(model_path)
    ids = encode_prompts(tokenizer, render_prompts(tokenizer, messages))
    return generate_hf(model, tokenizer, ids, cfg, progress), backend
