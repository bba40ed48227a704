"""What the judge and the candidate say to each other about objects: one definition of each name both use.

Operation names, the special methods a proxy may have (the candidate reports which its object's type has),
the collections ABCs that need registration, and the keys of the description of a handle. Every table either
side builds from these is generated here or from these, never kept in sync by hand. stdlib only; the zygote
imports it, so nothing beyond the interpreter's core modules.
"""

# Requests, named by their first item (["call", id, args, kwargs, ...], ["get", id, name], ...; a reply is
# channel.REPLIES'). Each side serves the other's from one table, one handler per kind.
REQ_CALL, REQ_GET, REQ_SET, REQ_DEL, REQ_OP, REQ_WITH = "call", "get", "set", "del", "op", "with"
# What the judge asks of the program's objects (candidate.Server.handle); "with" wraps another of these in the
# state the test shares with the program (mirrors.py).
JUDGE_REQUESTS = (REQ_CALL, REQ_WITH, REQ_GET, REQ_SET, REQ_DEL, REQ_OP)
# What the program asks of the test's objects it was handed (session.Session._serve).
CANDIDATE_REQUESTS = (REQ_CALL, REQ_GET, REQ_SET, REQ_OP)

# Operations the judge asks of a program's object with one operand (["op", id, name]); the candidate runs
# them with the builtin of the same meaning (candidate._UNARY).
UNARY = ("len", "bool", "iter", "next", "str", "repr", "hash", "int", "float", "index", "complex", "neg", "pos",
         "abs", "invert", "reversed", "dir", "type", "enter")
# The other operations the judge asks of a program's object (["op", id, name, *args]; candidate._NAMED_OPS).
NAMED_OPS = ("getitem", "setitem", "delitem", "format", "binop", "isinstance", "issubclass", "round", "send",
             "throw", "close", "copy", "deepcopy", "exit", "await", "nextn")
# Binary arithmetic between two objects of the program (["op", id, "binop", name, other]): operator's names.
BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and", "or", "xor")


def binop_name(name):
    """operator's function for a binary dunder's stem ("and" -> "and_")."""
    return name + "_" if name in ("and", "or") else name


BINOPS = tuple(binop_name(n) for n in BINARY)
# Unary operations that are special methods of their own (__len__, __neg__, ...): a proxy has each only when
# the program's type has it. str/repr/hash/dir every object has; next, type, enter are not dunders of UNARY's kind.
UNARY_CAPS = ("len", "bool", "iter", "int", "float", "index", "complex", "neg", "pos", "abs", "invert", "reversed",
              "enter")
# Special methods of other shapes that a proxy has only when the program's type has them.
OTHER_CAPS = ("call", "getitem", "setitem", "delitem", "round", "instancecheck", "subclasscheck", "contains", "next",
              "exit", "await")
# Every optional special method, as a dunder: the candidate reports which of these its object's type has (the
# capability list, INFO_CAPS), the judge's proxy class gets exactly those (proxy.OPTIONAL).
CAPS = tuple(f"__{n}__" for n in (*OTHER_CAPS, *UNARY_CAPS, *(p + n for n in BINARY for p in ("", "r"))))
NOHASH = "nohash"  # in a capability list: the type sets __hash__ = None

# collections.abc's classes a class must derive from or be registered with (no structural check makes one):
# the candidate names those its object's class is one of, the judge registers its proxy class with them.
NOMINAL_ABCS = ("Mapping", "MutableMapping", "Sequence", "MutableSequence", "Set", "MutableSet", "MappingView",
                "KeysView", "ItemsView", "ValuesView")

# Operations the candidate asks of an object of the test (a callback, a stream, a test's instance):
# ["op", id, name, *args]. The judge decides which it runs for which kind of object (session._serve).
STREAM_OPS = ("iter", "next", "enter", "exit")
COMPARE_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "hash")
OBJECT_OPS = ("len", "bool", "getitem", "contains", "repr", "str", "enter", "exit")
CALL_OPS = ("bool",)  # of a test's callable the program keeps (`if self.action:`)
# Generator methods a test may call on a program's generator (["op", id, name, *args]; part of NAMED_OPS).
GENERATOR_OPS = ("send", "throw", "close")

# The description of a program's object in its handle ["h", id, info]: the keys of info.
INFO_KIND = "k"  # KIND_*
INFO_NAME = "n"  # its (class's) name
INFO_CAPS = "m"  # the CAPS its type has (+ NOHASH)
INFO_CLASS = "c"  # its class: a reference to a standard-library type, or the handle of the program's class
INFO_EQ = "eq"  # 1: its class keeps object's == and !=
INFO_ORD = "ord"  # 1: its class keeps object's ordering
INFO_ABCS = "abc"  # the NOMINAL_ABCS its class is one of
INFO_FIELDS = "df"  # a dataclass's field names
INFO_EQ_FIELDS = "ef"  # the fields a dataclass's generated == compares (its class keeps that ==)
INFO_ORDER_FIELDS = "eo"  # 1: its class keeps the generated ordering too (order=True), on the same fields
INFO_REF = "r"  # [module, qualname] of the standard-library module or exception class it is
INFO_BASES = "b"  # an exception class's bases
INFO_SUBMODULES = "sm"  # a standard-library module's submodules loaded in the program's process
INFO_VIEW = "vw"  # VIEW_*: a set-like view of a dict (its == is decided by the items it yields, as data)
VIEW_KEYS, VIEW_ITEMS = "keys", "items"
KIND_EXC, KIND_CLASS, KIND_MODULE, KIND_FUNCTION, KIND_OBJECT = "exc", "cls", "mod", "fn", "obj"
# What the candidate may do with an object of the test: the kind in the judge's handle ["h", id, {INFO_KIND: kind}].
EXPORT_CALL, EXPORT_STREAM, EXPORT_ITERATOR, EXPORT_OBJECT = "call", "stream", "iterator", "object"
