"""Synthetic, verifiable code problems: "write f(x) that applies these steps", split so held-out is unseen.

A problem is a chain of 1..difficulty typed steps from data/synthetic/primitives.py on a random start
domain (integer, string, list of integers), e.g.

    Write a function f(x) where x is a list of integers. Apply these steps to x in order: sort it;
    add 3 to each element; take the sum. Return the result.
    For example, f([5, 2, 8]) returns 24.

with the reference ``def f(x): x = sorted(x); x = [v + 3 for v in x]; x = sum(x); return x`` (one line per
step) and `tests_per_problem` MBPP-style asserts. The split is by *structure* (start domain + step
names): a held-out problem's chain of steps never occurs in train (only its steps do, in other chains),
so held-out pass@k measures generalisation to unseen compositions, not recall.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .primitives import BY_NAME, DOMAIN_WORDS, DOMAINS, PRIMITIVES, random_input

MAX_DIFFICULTY = 6


@dataclass(frozen=True)
class Step:
    name: str
    consts: tuple[tuple[str, Any], ...] = ()

    def apply(self, x: Any) -> Any:
        return BY_NAME[self.name].fn(x, **dict(self.consts))


@dataclass(frozen=True)
class SynthProblem:
    """One problem; `text`, `code` and `tests` are the MBPP columns data/preprocess.py converts."""

    task_id: str
    domain: str
    steps: tuple[Step, ...]
    text: str
    code: str
    tests: tuple[str, ...]

    @property
    def structure(self) -> str:
        """Start domain and step names, e.g. "list:list.sort>list.add": what the split keeps apart."""
        return structure_of(self.domain, self.steps)

    def row(self) -> dict:
        return {"task_id": self.task_id, "text": self.text, "code": self.code, "test_list": list(self.tests),
                "structure": self.structure, "steps": len(self.steps)}


def structure_of(domain: str, steps: tuple[Step, ...]) -> str:
    return f"{domain}:" + ">".join(s.name for s in steps)


def is_heldout(structure: str, seed: int, ratio: float) -> bool:
    """Held-out iff sha256(seed, structure) falls below `ratio`: every problem of a structure is on one side."""
    h = hashlib.sha256(f"{seed}\x00{structure}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64 < ratio


def sample_chain(rng: random.Random, difficulty: int) -> tuple[str, tuple[Step, ...]]:
    """A start domain and 1..difficulty steps whose types chain."""
    domain = rng.choice(DOMAINS)
    cur, steps = domain, []
    for _ in range(rng.randint(1, difficulty)):
        prim = rng.choice([p for p in PRIMITIVES if p.takes == cur])
        steps.append(Step(prim.name, tuple(sorted(prim.sample_consts(rng).items()))))
        cur = prim.gives
    return domain, tuple(steps)


def run_chain(steps: tuple[Step, ...], x: Any) -> Any:
    for s in steps:
        x = s.apply(x)
    return x


def render(task_id: str, domain: str, steps: tuple[Step, ...], inputs: list) -> SynthProblem:
    """Spec text, reference code and asserts of a chain on the given test inputs (the first is the example)."""
    outputs = [run_chain(steps, x) for x in inputs]
    phrases = "; ".join(BY_NAME[s.name].words(dict(s.consts)) for s in steps)
    text = (f"Write a function f(x) where x is {DOMAIN_WORDS[domain]}. Apply these steps to x in order: {phrases}. "
            f"Return the result.\nFor example, f({inputs[0]!r}) returns {outputs[0]!r}.")
    body = "\n".join(BY_NAME[s.name].lines(dict(s.consts)) for s in steps)
    code = f"def f(x):\n{body}\n    return x\n"
    tests = tuple(f"assert f({x!r}) == {y!r}" for x, y in zip(inputs, outputs, strict=True))
    return SynthProblem(task_id, domain, steps, text, code, tests)


def _problems(rng: random.Random, difficulty: int, tests_per_problem: int) -> Iterator[tuple[str, tuple, list]]:
    """Endless (domain, steps, inputs) whose outputs are not all equal (a constant answer must fail)."""
    while True:
        domain, steps = sample_chain(rng, difficulty)
        inputs: list = []
        for _ in range(tests_per_problem * 4):
            x = random_input(domain, rng)
            if x not in inputs:
                inputs.append(x)
            if len(inputs) == tests_per_problem:
                break
        outputs = [repr(run_chain(steps, x)) for x in inputs]
        if len(inputs) == tests_per_problem and len(set(outputs)) > 1:
            yield domain, steps, inputs


def generate(n_train: int, n_heldout: int, *, difficulty: int = 3, seed: int = 0, heldout_ratio: float = 0.2,
             tests_per_problem: int = 4) -> tuple[list[SynthProblem], list[SynthProblem]]:
    """(train, held-out) problems: distinct chains; no held-out structure in train; held-out steps all seen.

    ValueError when the knobs are out of range or the space of chains is too small for the counts asked.
    """
    if not 1 <= difficulty <= MAX_DIFFICULTY:
        raise ValueError(f"difficulty must be in 1..{MAX_DIFFICULTY}, got {difficulty}")
    if difficulty < 2 and n_heldout > 0:
        raise ValueError("difficulty 1 leaves no held-out problem: a one-step chain's only step would be unseen "
                         "in train; use difficulty >= 2")
    if n_train < 1 or n_heldout < 0:
        raise ValueError(f"need at least 1 train problem and >= 0 held-out ones, got {n_train} and {n_heldout}")
    if not 0 < heldout_ratio < 1:
        raise ValueError(f"heldout_ratio must be in (0, 1), got {heldout_ratio}")
    if tests_per_problem < 2:
        raise ValueError(f"tests_per_problem must be at least 2, got {tests_per_problem}")
    rng = random.Random(seed)
    seen: set[tuple] = set()
    train: list[SynthProblem] = []
    pending: list[tuple[str, tuple, list]] = []  # held-out candidates, kept once train's steps are known
    budget = 200 * (n_train + n_heldout) + 10_000
    for domain, steps, inputs in _problems(rng, difficulty, tests_per_problem):
        budget -= 1
        if budget < 0:
            raise ValueError(f"could not draw {n_train} train and {n_heldout} held-out distinct problems at "
                             f"difficulty {difficulty}: the space of chains is too small; ask for fewer problems "
                             "or a higher difficulty")
        key = (domain, steps)
        if key in seen:
            continue
        if is_heldout(structure_of(domain, steps), seed, heldout_ratio):
            if len(pending) < 2 * n_heldout:
                seen.add(key)
                pending.append((domain, steps, inputs))
        elif len(train) < n_train:
            seen.add(key)
            train.append(render(f"synthetic/train/{len(train)}", domain, steps, inputs))
        if len(train) >= n_train and len(pending) >= 2 * n_heldout:
            break
    train_steps = {s.name for p in train for s in p.steps}
    heldout = [render(f"synthetic/heldout/{i}", d, s, x)
               for i, (d, s, x) in enumerate([c for c in pending if {st.name for st in c[1]} <= train_steps]
                                             [:n_heldout])]
    if len(heldout) < n_heldout:
        raise ValueError(f"only {len(heldout)} of {n_heldout} held-out problems use steps seen in train; "
                         "ask for more train problems")
    return train, heldout
