"""inside/protocol.py: the names both sides use, and the tables each side generates from them, agree."""

from __future__ import annotations

import collections
import operator
import types

from coderl.rewards.sandbox.inside import candidate, ops, protocol, proxy, session


def test_capabilities_are_one_list_both_sides_use():
    assert len(set(protocol.CAPS)) == len(protocol.CAPS)
    assert tuple(proxy.OPTIONAL) == protocol.CAPS  # the judge's proxy methods, in the protocol's order
    for n in protocol.BINARY:
        assert f"__{n}__" in protocol.CAPS and f"__r{n}__" in protocol.CAPS
        assert callable(getattr(operator, protocol.binop_name(n)))
    assert set(ops.BINOPS) == set(protocol.BINOPS)
    assert set(ops.UNARY) == set(protocol.UNARY) and all(map(callable, ops.UNARY.values()))
    assert tuple(proxy._NOMINAL_ABCS) and set(proxy._NOMINAL_ABCS) == set(protocol.NOMINAL_ABCS)
    assert all(isinstance(getattr(collections.abc, n), type) for n in protocol.NOMINAL_ABCS)


def test_the_candidate_runs_every_operation_the_judges_proxies_ask():
    assert set(ops.NAMED) == set(protocol.NAMED_OPS) and not set(protocol.NAMED_OPS) & set(protocol.UNARY)
    assert set(protocol.GENERATOR_OPS) <= set(protocol.NAMED_OPS)
    # every operation name the judge's side sends (`.op(self, "name"` in its source) is one the candidate knows
    import inspect
    import re
    asked = set()
    for module in (proxy, session):
        asked |= set(re.findall(r'\.op\(self, "([a-z_]+)"', inspect.getsource(module)))
    assert asked and asked <= set(protocol.NAMED_OPS) | set(protocol.UNARY), asked - set(protocol.NAMED_OPS)
    assert set(protocol.UNARY_CAPS) <= set(protocol.UNARY)


def test_each_side_serves_each_request_kind_of_the_other_by_one_handler():
    assert set(candidate._HANDLERS) == set(protocol.JUDGE_REQUESTS) and all(map(callable, candidate._HANDLERS.values()))
    assert set(session._SERVED) == set(protocol.CANDIDATE_REQUESTS) and all(map(callable, session._SERVED.values()))
    # every request the candidate's stand-ins for the test's objects send is one the judge serves
    import inspect
    import re
    sent = set(re.findall(r'_coderl_ask\("([a-z_]+)"', inspect.getsource(candidate)))
    assert sent and sent <= set(protocol.CANDIDATE_REQUESTS), sent - set(protocol.CANDIDATE_REQUESTS)


def test_the_judge_serves_every_operation_the_candidate_may_ask():
    served = session._SERVED_OPS
    assert set(served) == {protocol.EXPORT_STREAM, protocol.EXPORT_ITERATOR, protocol.EXPORT_OBJECT,
                           protocol.EXPORT_CALL}
    assert set(served[protocol.EXPORT_STREAM]) == set(protocol.STREAM_OPS)
    assert set(protocol.COMPARE_OPS) <= set(served[protocol.EXPORT_ITERATOR]) & set(served[protocol.EXPORT_CALL])
    assert set(protocol.OBJECT_OPS) | set(protocol.COMPARE_OPS) <= set(served[protocol.EXPORT_OBJECT])
    assert set(protocol.CALL_OPS) <= set(served[protocol.EXPORT_CALL])
    assert set().union(*served.values()) <= set(session._OP_IMPL)
    for name in protocol.COMPARE_OPS[:6]:  # the candidate's stand-in for a test object asks for each
        assert f"__{name}__" in vars(candidate.JudgeObject)


class _Sized:
    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())

    __hash__ = None


class _Plain:
    pass


def _has(t, name):
    """t has special method `name` as Python looks it up (the first class of its MRO that defines it)."""
    return next((vars(k)[name] for k in t.__mro__ if name in vars(k)), None) is not None


def _described(obj):
    """The judge's proxy class for obj, as the candidate describes it (the handle's info, through JSON keys only)."""
    server = candidate.Server(types.ModuleType("solution"))
    info = server._info(obj)
    assert set(info) <= {v for k, v in vars(protocol).items() if k.startswith("INFO_")}
    return proxy._proxy_class(info)


def test_a_proxy_has_exactly_the_special_methods_the_candidate_reports():
    for obj in ([1], {"a": 1}, "s", _Sized(), _Plain(), len, iter([]), (x for x in ()), 3.5, collections.Counter()):
        cls = _described(obj)
        for cap in protocol.CAPS:
            assert (cap in vars(cls)) == _has(type(obj), cap), (type(obj).__name__, cap)
        assert (vars(cls).get("__hash__", 0) is None) == (not _has(type(obj), "__hash__")), type(obj).__name__


def test_class_name_equality_and_nominal_abcs_cross_by_name():
    cls = _described(_Plain())
    assert cls.__name__ == "_Plain" and cls._coderl_eq and cls._coderl_ord
    sized = _described(_Sized())
    assert not issubclass(sized, collections.abc.Mapping)
    mapping = _described(collections.OrderedDict())
    assert issubclass(mapping, collections.abc.MutableMapping) and mapping._coderl_type is collections.OrderedDict
    assert _described(_Plain()) is cls  # one class per shape (bounded cache)
