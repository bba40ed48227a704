"""Near misses of a reference solution: what an imperfect demonstrator writes instead of it.

A warm start trained only on reference solutions imitates a perfect demonstrator; what a pretrained model
brings to GRPO is closer to this: mostly right code, plus habits the tests punish whatever the problem
(the function under another name than the one asked for, the result printed instead of returned) and near
misses (a constant off by one, an operator or comparison swapped, a step left out or done in the wrong
order) that look as plausible as the right code. Only the tests tell them from the reference.
`SFTConfig.noise` mixes them into the warm start's targets, so that what GRPO gains on the held-out problems
is what the reward taught the policy to tell apart.

One mutation per variant, of a kind drawn from `MUTATIONS` by weight among those that apply (each kind:
collect the sites of the tree where it applies, rewrite one). Every variant parses; most (not all: swapping
two commuting steps changes nothing) compute something else or fail.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable

_SWAP_OPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
             ast.Mod: ast.FloorDiv}
_SWAP_CMP = {ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq}


def _constant_sites(tree: ast.Module) -> list[Callable[[random.Random], None]]:
    sites = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            sites.append(lambda rng, n=node: setattr(n, "value", n.value + rng.choice((-1, 1))))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isalpha():
            def shift(rng, n=node):
                i = rng.randrange(len(n.value))
                ch = chr(ord("a") + (ord(n.value[i].lower()) - ord("a") + rng.choice((1, 2))) % 26)
                n.value = n.value[:i] + ch + n.value[i + 1:]
            sites.append(shift)
    return sites


def _operator_sites(tree: ast.Module) -> list[Callable[[random.Random], None]]:
    sites = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _SWAP_OPS:
            sites.append(lambda rng, n=node: setattr(n, "op", _SWAP_OPS[type(n.op)]()))
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _SWAP_CMP:
                    sites.append(lambda rng, n=node, i=i: n.ops.__setitem__(i, _SWAP_CMP[type(n.ops[i])]()))
    return sites


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _steps(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """How many statements of the body come before a trailing return (the steps a mutation may drop or reorder)."""
    return len(fn.body) - (1 if fn.body and isinstance(fn.body[-1], ast.Return) else 0)


def _drop_sites(tree: ast.Module) -> list[Callable[[random.Random], None]]:
    return [lambda rng, n=fn, i=i: n.body.pop(i)
            for fn in _functions(tree) if _steps(fn) >= 2 for i in range(_steps(fn))]


def _swap(body: list[ast.stmt], i: int) -> None:
    body[i], body[i + 1] = body[i + 1], body[i]


def _swap_sites(tree: ast.Module) -> list[Callable[[random.Random], None]]:
    return [lambda rng, n=fn, i=i: _swap(n.body, i) for fn in _functions(tree) for i in range(_steps(fn) - 1)]


_OTHER_NAMES = ("solve", "solution", "func", "main")


def _rename_sites(tree: ast.Module) -> list[Callable[[random.Random], None]]:
    return [lambda rng, n=node: setattr(n, "name", rng.choice(_OTHER_NAMES))
            for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _print_sites(tree: ast.Module) -> list[Callable[[random.Random], None]]:
    sites = []
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list):
                for i, st in enumerate(body):
                    if isinstance(st, ast.Return) and st.value is not None:
                        sites.append(lambda rng, b=body, i=i: b.__setitem__(i, ast.Expr(ast.Call(
                            ast.Name("print", ast.Load()), [b[i].value], []))))
    return sites


# kind -> (the sites of a tree where it applies, each a rewrite of that site; weight when drawing a kind).
# Habits weigh more than the near misses: a pretrained model brings them to every problem.
MUTATIONS: dict[str, tuple[Callable[[ast.Module], list[Callable[[random.Random], None]]], float]] = {
    "rename": (_rename_sites, 3.0), "print_result": (_print_sites, 3.0),
    "constant": (_constant_sites, 1.0), "operator": (_operator_sites, 1.0), "drop_step": (_drop_sites, 1.0),
    "swap_steps": (_swap_sites, 1.0),
}


def normalized(code: str) -> str:
    """The code as ast.unparse writes it (so a near miss and the reference differ only in what was mutated)."""
    return ast.unparse(ast.parse(code)) + "\n"


def near_miss(code: str, rng: random.Random) -> str | None:
    """`code` with one mutation of a kind drawn by weight among those that apply; None when none applies."""
    tree = ast.parse(code)
    kinds = [k for k, (sites, _) in MUTATIONS.items() if sites(tree)]
    if not kinds:
        return None
    kind = rng.choices(kinds, weights=[MUTATIONS[k][1] for k in kinds])[0]
    rng.choice(MUTATIONS[kind][0](tree))(rng)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"
