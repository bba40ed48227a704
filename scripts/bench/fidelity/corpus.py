"""The fidelity corpus: HumanEval canonical programs, seeded AST mutants and correct plain-Python variants.

    from scripts.bench.fidelity.corpus import build_corpus
    from scripts.bench.workloads import humaneval_rows
    programs = build_corpus(humaneval_rows())          # ~1.9k Program(pid, task_id, kind, code, correct)

Deterministic: every random choice comes from random.Random(f"{seed}:{task_id}:{kind}"), so the same
seed gives the same programs, byte for byte, on every machine. Kinds:

* ``canonical`` -- prompt + canonical solution, verbatim.
* mutants (``correct=None``: only the reference executor knows their verdict) -- ``flip_cmp`` (one
  comparison negated: < <-> >=, == <-> !=, in <-> not in, ...), ``shift_const`` (one int constant +-1),
  ``int_float`` (an int constant written as a float), ``bool_int`` (True/False <-> 1/0),
  ``list_tuple`` (list results returned as tuples and vice versa), ``deque`` (list results returned
  as a deque, which never equals a list).
* rewrites that plain Python accepts (``correct=True``): ``rename_locals``, ``nt_typing`` /
  ``nt_collections`` (the result travels through a NamedTuple with defaults; tuple results *are* the
  NamedTuple), ``doctest_main`` / ``doctest_module`` (doctest tails), and the ``plain:*`` wrappers of
  PLAIN / TYPED (traceback, frames, tracing, dataclasses, lru_cache, containers, stdout, files, ...).

Mutations never touch a ``while`` loop's condition or body: a mutated loop that never ends costs every
executor its whole timeout and measures nothing but the timeout.
"""

from __future__ import annotations

import ast
import copy
import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

MUTANT_KINDS = ("flip_cmp", "shift_const", "int_float", "bool_int", "list_tuple", "deque")


@dataclass(frozen=True)
class Program:
    """One corpus program: a whole module, run against its HumanEval task's tests."""

    pid: str  # "<task_id>:<kind>[:<n>]", unique
    task_id: str
    kind: str
    code: str
    correct: bool | None  # True: a rewrite plain Python must accept; None: a mutant, verdict unknown
    label: object = None  # the Label it runs against (families with one label per task; HumanEval: None)
    reference: dict | None = None  # what the reference executor reads besides the label (APPS raw tests)


_NO_LITERAL = object()


def expected_literal(test: str) -> object:
    """The literal the first `candidate(...) == literal` of a check program expects (or _NO_LITERAL)."""
    for node in ast.walk(ast.parse(test)):
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
                and isinstance(node.left.func, ast.Name) and node.left.func.id == "candidate"
                and isinstance(node.ops[0], (ast.Eq, ast.Is))):
            try:
                return ast.literal_eval(node.comparators[0])
            except ValueError:
                return _NO_LITERAL
    return _NO_LITERAL


# --- mutation sites -----------------------------------------------------------------------------------

_FLIP = {ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _is_int(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _is_bool_or_01(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and (type(node.value) is bool or (
        type(node.value) is int and node.value in (0, 1)))


class _Sites(ast.NodeTransformer):
    """Counts the nodes matching `match` in function bodies (outside `while` loops), pre-order; with
    `target` set, replaces that one with `rewrite(node)`."""

    def __init__(self, match: Callable[[ast.AST], bool], target: int | None = None,
                 rewrite: Callable[[ast.AST], ast.AST] | None = None) -> None:
        self.match, self.target, self.rewrite, self.count, self.depth = match, target, rewrite, 0, 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.depth += 1
        node.body = [self.visit(s) for s in node.body]  # not the signature: defaults, annotations
        self.depth -= 1
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        return node

    def visit(self, node: ast.AST) -> ast.AST:
        if self.depth and self.match(node):
            k, self.count = self.count, self.count + 1
            if k == self.target:
                return ast.copy_location(self.rewrite(node), node)
        return super().visit(node)


def _site_mutants(tree: ast.Module, match, rewrite, n: int, rng: random.Random) -> list[ast.Module]:
    counter = _Sites(match)
    counter.visit(copy.deepcopy(tree))
    out = []
    for k in sorted(rng.sample(range(counter.count), min(n, counter.count))):
        out.append(ast.fix_missing_locations(_Sites(match, k, lambda node: rewrite(node, rng)).visit(
            copy.deepcopy(tree))))
    return out


def _flip(node: ast.Compare, rng: random.Random) -> ast.Compare:
    i = rng.randrange(len(node.ops))
    ops = list(node.ops)
    ops[i] = _FLIP[type(ops[i])]()
    return ast.Compare(node.left, ops, node.comparators)


def _shift(node: ast.Constant, rng: random.Random) -> ast.Constant:
    return ast.Constant(node.value + rng.choice((-1, 1)))


def _as_float(node: ast.Constant, rng: random.Random) -> ast.Constant:
    return ast.Constant(float(node.value))


def _bool_int(node: ast.Constant, rng: random.Random) -> ast.Constant:
    return ast.Constant(int(node.value) if type(node.value) is bool else bool(node.value))


class _RenameLocals(ast.NodeTransformer):
    """Renames every local variable of one function (not its parameters, imports or declared globals)."""

    def __init__(self, fn: ast.FunctionDef) -> None:
        stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        stored |= {n.name for n in ast.walk(fn) if isinstance(n, ast.ExceptHandler) and n.name}
        keep = {a.arg for n in ast.walk(fn) if isinstance(n, ast.arguments)
                for a in n.posonlyargs + n.args + n.kwonlyargs + [n.vararg, n.kwarg] if a is not None}
        keep |= {a.asname or a.name.split(".")[0] for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))
                 for a in n.names}
        keep |= {name for n in ast.walk(fn) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names}
        self.names = {old: f"renamed_{i}" for i, old in enumerate(sorted(stored - keep))}

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(self.names.get(node.id, node.id), node.ctx), node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        node.name = self.names.get(node.name, node.name) if node.name else None
        return self.generic_visit(node)


def _rename_locals(tree: ast.Module, entry_point: str) -> ast.Module | None:
    tree = copy.deepcopy(tree)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point]
    if not fns:
        return None
    renamer = _RenameLocals(fns[-1])
    if not renamer.names:
        return None
    renamer.visit(fns[-1])
    return tree


# --- wrappers: the entry point re-defined around the original ------------------------------------------

@dataclass(frozen=True)
class Wrapper:
    """Source pieces of a wrapper around the entry point: module prelude, statements before / after the
    call (the result is `result`), and the call itself ({impl} = the original function)."""

    prelude: str = ""
    before: str = ""
    after: str = ""
    call: str = "{impl}(*args, **kwargs)"
    correct: bool = True


PLAIN: dict[str, Wrapper] = {
    "traceback_format_exc": Wrapper("import traceback", 'try:\n    raise ValueError("probe")\n'
                                    "except ValueError:\n    trace = traceback.format_exc()"),
    "traceback_print_exc": Wrapper("import traceback", 'try:\n    raise ValueError("probe")\n'
                                   "except ValueError:\n    traceback.print_exc()"),
    "inspect_currentframe": Wrapper("import inspect", "frame = inspect.currentframe()\n"
                                    'name = frame.f_code.co_name if frame is not None else ""'),
    "sys_getframe": Wrapper("import sys", "caller = sys._getframe(0).f_code.co_name"),
    "tb_frame": Wrapper("", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n"
                            "    where = e.__traceback__.tb_frame.f_code.co_name"),
    "settrace_none": Wrapper("import sys\nsys.settrace(None)"),
    "gettrace": Wrapper("import sys", "tracing = sys.gettrace() is not None"),
    "setrecursionlimit": Wrapper("import sys\nsys.setrecursionlimit(5000)"),
    "dataclass": Wrapper("import dataclasses\n\n\n@dataclasses.dataclass\nclass Box:\n    value: object\n"
                         "    calls: int = 0", after="result = Box(result).value"),
    "frozen_dataclass": Wrapper("from dataclasses import dataclass, field\n\n\n@dataclass(frozen=True)\n"
                                "class Frame:\n    value: object\n    tags: list = field(default_factory=list)",
                                after="result = Frame(result).value"),
    "lru_cache": Wrapper("import functools\n\n\n@functools.lru_cache(maxsize=None)\ndef cached_fib(n):\n"
                         "    return n if n < 2 else cached_fib(n - 1) + cached_fib(n - 2)", "cached_fib(30)"),
    "functools_wraps": Wrapper("import functools\n\n\ndef logged(fn):\n    @functools.wraps(fn)\n"
                               "    def inner(*a, **k):\n        return fn(*a, **k)\n    return inner",
                               call="logged({impl})(*args, **kwargs)"),
    "partial": Wrapper("import functools", call="functools.partial({impl})(*args, **kwargs)"),
    "generator": Wrapper("def items(xs):\n    for x in xs:\n        yield x\n\n\ndef once(v):\n    yield v",
                         after="result = list(items(result)) if type(result) is list else next(once(result))"),
    "recursion": Wrapper("def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)", "depth(200)"),
    "global_state": Wrapper("CALLS = 0", "global CALLS\nCALLS += 1"),
    "class_wrapper": Wrapper("class Solver:\n    def __init__(self, fn):\n        self.fn = fn\n\n"
                             "    def __call__(self, *a, **k):\n        return self.fn(*a, **k)",
                             call="Solver({impl})(*args, **kwargs)"),
    "enum": Wrapper("import enum\n\n\nclass Mode(enum.Enum):\n    FAST = 1\n    SLOW = 2", "mode = Mode(1)"),
    "abc_class": Wrapper("import abc\n\n\nclass Base(abc.ABC):\n    @abc.abstractmethod\n    def run(self, f):\n"
                         "        ...\n\n\nclass Runner(Base):\n    __slots__ = ()\n\n    def run(self, f):\n"
                         "        return f", call="Runner().run({impl})(*args, **kwargs)"),
    "print_stdout": Wrapper("", 'print("calling with", len(args), "arguments")',
                            'print("result:", repr(result)[:60])'),
    "print_stderr": Wrapper("import sys", 'print("debug: called", file=sys.stderr)'),
    "redirect_stdout": Wrapper("import contextlib\nimport io", "buf = io.StringIO()\n"
                               "with contextlib.redirect_stdout(buf):\n    print('captured')"),
    "logging_warning": Wrapper("import logging", 'logging.getLogger("solution").warning("called")'),
    "warnings_warn": Wrapper("import warnings", 'warnings.warn("probe", UserWarning)'),
    "temp_file": Wrapper("import tempfile", after="with tempfile.TemporaryFile('w+') as fh:\n"
                         "    fh.write(repr(result))\n    fh.seek(0)\n    fh.read()"),
    "cwd_file": Wrapper("", after="with open('scratch.txt', 'w') as fh:\n    fh.write(repr(result))\n"
                        "with open('scratch.txt') as fh:\n    fh.read()"),
    "raise_catch": Wrapper("", 'try:\n    {}["missing"]\nexcept KeyError as e:\n    message = str(e)\n'
                           "finally:\n    done = True"),
    "threading": Wrapper("import threading", "box = []\n"
                         "worker = threading.Thread(target=lambda: box.append({impl}(*args, **kwargs)))\n"
                         "worker.start()\nworker.join()", call="box[0]"),
    "deepcopy_args": Wrapper("import copy", "args = copy.deepcopy(args)"),
    "eval_exec": Wrapper("", 'scope = {}\nexec("x = 1 + 1", scope)\nassert eval("x * 2", scope) == 4'),
    "importlib": Wrapper("import importlib", 'json_module = importlib.import_module("json")\n'
                         "json_module.dumps([1, 2])"),
    "random_seed": Wrapper("import random", "random.seed(0)\nrandom.random()"),
    "gc_collect": Wrapper("import gc", "gc.collect()"),
    "gc_get_objects": Wrapper("import gc", "count = len(gc.get_objects())"),
    "os_environ": Wrapper("import os", 'home = os.environ.get("HOME", "")'),
    "sleep": Wrapper("import time", "time.sleep(0.001)"),
    "mappingproxy_internal": Wrapper("import types\nLIMITS = types.MappingProxyType({'max': 10})",
                                     "limit = LIMITS['max']"),
    "chainmap_internal": Wrapper("import collections\nDEFAULTS = collections.ChainMap({'a': 1}, {'b': 2})",
                                 "b = DEFAULTS['b']"),
}

# Wrappers that change the result's type, for tasks whose tests expect that type (expected_literal).
TYPED: dict[str, tuple[str, Wrapper]] = {
    "userlist": ("list", Wrapper("import collections",
                                 after="result = collections.UserList(result) if type(result) is list else result")),
    "userstring": ("str", Wrapper("import collections",
                                  after="result = collections.UserString(result) if type(result) is str else result")),
    "chainmap": ("dict", Wrapper("import collections",
                                 after="result = collections.ChainMap(result) if type(result) is dict else result")),
    "mappingproxy": ("dict", Wrapper("import types", after="result = types.MappingProxyType(result) "
                                                           "if type(result) is dict else result")),
    "ordereddict": ("dict", Wrapper("import collections", after="result = collections.OrderedDict(result) "
                                                                "if type(result) is dict else result")),
    "counter": ("dict", Wrapper("import collections",
                                after="result = collections.Counter(result) if type(result) is dict else result")),
}
SWAP = Wrapper(after="result = tuple(result) if type(result) is list else "
                     "list(result) if type(result) is tuple else result", correct=False)
DEQUE = Wrapper("import collections", after="result = collections.deque(result) if type(result) is list else result",
                correct=False)


def _namedtuple(flavour: str, arity: int) -> Wrapper:
    fields = [f"f{i}" for i in range(arity)]
    if flavour == "typing":
        prelude = "from typing import NamedTuple\n\n\nclass Result(NamedTuple):\n" + "".join(
            f"    {f}: object = None\n" for f in fields)
    else:
        prelude = f"import collections\nResult = collections.namedtuple('Result', {fields!r}, defaults=[None] * {arity})"
    return Wrapper(prelude, after=f"result = Result(*result) if type(result) is tuple and len(result) == {arity} "
                                  "else Result(result).f0")


def _indent(src: str) -> str:
    return "".join(f"    {line}\n" if line else "\n" for line in src.splitlines())


def wrap(program: str, entry_point: str, w: Wrapper) -> str:
    """`program` with `entry_point` re-defined as a wrapper that calls the original as w describes."""
    impl = f"original_{entry_point}"
    body = "\n".join(part for part in (w.before.replace("{impl}", impl), f"result = {w.call.format(impl=impl)}",
                                        w.after) if part)
    return (f"{program.rstrip()}\n\n\n{w.prelude}\n{impl} = {entry_point}\n\n\n"
            f"def {entry_point}(*args, **kwargs):\n{_indent(body)}    return result\n")


DOCTEST_TAILS = {
    "doctest_main": '\n\nif __name__ == "__main__":\n    import doctest\n    doctest.testmod()\n',
    "doctest_module": "\n\nimport doctest\ndoctest.testmod()\n",
}


# --- the corpus -----------------------------------------------------------------------------------------

def ast_mutants(tree: ast.Module, rng, mutants: int = 2) -> list[tuple[str, str, None]]:
    """(kind, code, None) for the seeded AST mutants of one program; rng(kind) -> random.Random."""
    out = []
    for kind, match, rewrite in (("flip_cmp", lambda n: isinstance(n, ast.Compare), _flip),
                                 ("shift_const", _is_int, _shift),
                                 ("int_float", _is_int, _as_float),
                                 ("bool_int", _is_bool_or_01, _bool_int)):
        n = mutants if kind in ("flip_cmp", "shift_const") else 1
        out += [(kind, ast.unparse(t), None) for t in _site_mutants(tree, match, rewrite, n, rng(kind))]
    return out


def written_items(tid: str, task: dict, seed: int, mutants: int) -> list[tuple[str, str, bool | None]]:
    """A written task's programs: its reference, its right alternatives, its bugs and its seeded AST mutants."""
    items: list[tuple[str, str, bool | None]] = [("canonical", task["code"], True)]
    items += [(f"alt:{k}", v, True) for k, v in task.get("right", {}).items()]
    items += [(f"bug:{k}", v, None) for k, v in task.get("wrong", {}).items()]
    return items + ast_mutants(ast.parse(task["code"]), lambda kind: random.Random(f"{seed}:{tid}:{kind}"), mutants)


def family_programs(tasks: list[dict], rows: list[dict], id_key: str, label, seed: int, every: int, mutants: int,
                    reference=lambda task: None) -> list[Program]:
    """A written family's programs (every N-th task): each task's written items numbered with its row's label
    (`label(row, index)`) and the reference data its own harness reads (`reference(task)`)."""
    out = []
    for i, (t, row) in enumerate(zip(tasks, rows, strict=True)):
        if i % every:
            continue
        tid = row[id_key]
        out += numbered(tid, written_items(tid, t, seed, mutants), label(row, i), reference(t))
    return out


def dedent(src: str) -> str:
    """A program or test written indented in a triple-quoted string, as its file would hold it."""
    return textwrap.dedent(src).strip("\n") + "\n"


def numbered(tid: str, out: list[tuple[str, str, bool | None]], label=None, reference=None) -> list[Program]:
    """Programs with unique pids ("<tid>:<kind>", a counter for repeated kinds); duplicate code dropped."""
    programs, seen, counts = [], set(), {}
    for kind, code, correct in out:
        if code in seen:
            continue
        seen.add(code)
        counts[kind] = counts.get(kind, 0) + 1
        pid = f"{tid}:{kind}" if kind not in ("flip_cmp", "shift_const") else f"{tid}:{kind}:{counts[kind]}"
        programs.append(Program(pid, tid, kind, code, correct, label, reference))
    return programs


def task_programs(row: dict, index: int, seed: int = 0, mutants: int = 2, plain: int = 3) -> list[Program]:
    """Every corpus program of one HumanEval task (deterministic in seed and index)."""
    tid, ep = row["task_id"], row["entry_point"]
    canonical = row["prompt"] + row["canonical_solution"]
    tree = ast.parse(canonical)
    out: list[tuple[str, str, bool | None]] = [("canonical", canonical, True)]

    def rng(kind: str) -> random.Random:
        return random.Random(f"{seed}:{tid}:{kind}")

    out += ast_mutants(tree, rng, mutants)
    renamed = _rename_locals(tree, ep)
    if renamed is not None:
        out.append(("rename_locals", ast.unparse(renamed), True))
    tail = "doctest_main" if index % 2 == 0 else "doctest_module"
    out.append((tail, canonical.rstrip() + DOCTEST_TAILS[tail], True))

    literal = expected_literal(row["test"])
    rtype = None if literal is _NO_LITERAL else type(literal).__name__
    arity = len(literal) if rtype == "tuple" else 1
    flavours = ("typing", "collections") if rtype == "tuple" else (("typing",) if index % 2 == 0 else ("collections",))
    out += [(f"nt_{f}", wrap(canonical, ep, _namedtuple(f, arity)), True) for f in flavours]
    if rtype in ("list", "tuple"):
        out.append(("list_tuple", wrap(canonical, ep, SWAP), None))
    if rtype == "list":
        out.append(("deque", wrap(canonical, ep, DEQUE), None))
    out += [(f"plain:{name}", wrap(canonical, ep, w), w.correct) for name, (t, w) in TYPED.items() if t == rtype]
    names = sorted(PLAIN)
    for k in range(plain):  # rotate through PLAIN so that every wrapper meets many different tasks
        name = names[(index * plain + k) % len(names)]
        out.append((f"plain:{name}", wrap(canonical, ep, PLAIN[name]), PLAIN[name].correct))
    return numbered(tid, out)


def build_corpus(rows: list[dict], seed: int = 0, mutants: int = 2, plain: int = 3,
                 every: int = 1) -> list[Program]:
    """The corpus over `rows` (HumanEval order); every=N keeps every N-th task (a smaller subset)."""
    return [p for i, row in enumerate(rows) if i % every == 0
            for p in task_programs(row, i, seed, mutants, plain)]
