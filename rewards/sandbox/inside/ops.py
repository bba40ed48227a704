"""What the candidate runs for each operation the judge asks of a program's object (["op", id, name, *args]).

The names are protocol.py's (UNARY, NAMED_OPS, BINOPS); this is the candidate's side of each. Everything here
runs the program's own code on its own objects, in its own process. stdlib only; imported by the zygote.
"""

import builtins
import operator
import types

from . import protocol as P

_NEXT_BATCH = 256  # items one "nextn" request may take from an iterator
BINOPS = {name: getattr(operator, name) for name in P.BINOPS}
_UNARY_IMPL = {"index": operator.index, "neg": operator.neg, "pos": operator.pos, "invert": operator.invert,
               "dir": lambda o: sorted(str(n) for n in dir(o)), "enter": lambda o: o.__enter__()}
UNARY = {name: _UNARY_IMPL.get(name) or getattr(builtins, name) for name in P.UNARY}


def _setitem(t, name, args):
    t[args[0]] = args[1]


def _delitem(t, name, args):
    del t[args[0]]


def _generator_op(t, name, args):
    """A test driving a generator of the program (proxy._GENERATOR): send / throw / close."""
    if not isinstance(t, types.GeneratorType):
        raise ValueError(f"unknown operation {name!r}")
    return getattr(t, name)(*args[:1])


def _copy(t, name, args):
    """copy.copy / deepcopy in the test (proxy.Proxy.__deepcopy__): the program copies its own object."""
    import copy
    return getattr(copy, name)(t)


def _await(t, name, args):
    """The judge's `await` on a coroutine of the program: run here, in an event loop of its own."""
    import asyncio

    async def drive(awaitable):
        return await awaitable
    return asyncio.run(drive(t))


def _nextn(t, name, args):
    """[items, done]: the judge's prefetch for a long iteration."""
    items = []
    for _ in range(min(int(args[0]), _NEXT_BATCH)):
        try:
            items.append(next(t))
        except StopIteration:
            return [items, True]
    return [items, False]


# The operations other than UNARY the judge asks of a program's object (["op", id, name, *args]), by name.
NAMED = {
    "getitem": lambda t, name, args: t[args[0]],
    "setitem": _setitem,
    "delitem": _delitem,
    "format": lambda t, name, args: format(t, args[0]),
    "binop": lambda t, name, args: BINOPS[args[0]](t, args[1]),
    "isinstance": lambda t, name, args: isinstance(args[0], t),
    "issubclass": lambda t, name, args: issubclass(args[0], t),
    "round": lambda t, name, args: round(t, *args),
    **{n: _generator_op for n in P.GENERATOR_OPS},
    "copy": _copy,
    "deepcopy": _copy,
    # the type of an exception in flight in the test, never its value
    "exit": lambda t, name, args: t.__exit__(args[0] if args else None, None, None),
    "await": _await,
    "nextn": _nextn,
}


def run(target, name, args):
    if name in UNARY:
        return UNARY[name](target)
    op = NAMED.get(name)
    if op is None:
        raise ValueError(f"unknown operation {name!r}")
    return op(target, name, args)
