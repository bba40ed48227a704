"""rewards/sandbox/inside/channel.py: nested request/reply over a real socket pair, both ends in this process."""

from __future__ import annotations

import socket
import threading

import pytest

from coderl.rewards.sandbox.inside import framing
from coderl.rewards.sandbox.inside.channel import Channel, PeerGone


def _pair(handler_a, handler_b, limit=1 << 20):
    a, b = socket.socketpair()
    return (a, b), Channel(a.fileno(), limit, handler_a), Channel(b.fileno(), limit, handler_b)


def _served(channel):
    t = threading.Thread(target=channel.serve_forever, daemon=True)
    t.start()
    return t


def test_replies_nest_like_calls():
    """A asks B to double; B asks A (the caller, still waiting) for an increment first: A serves it meanwhile."""
    log = []

    def a_handler(msg):
        log.append(msg)
        return ["ok", msg[1] + 1] if msg[0] == "inc" else ["raise", {"type": "ValueError"}]

    def b_handler(msg):
        if msg[0] == "double":
            inner = b.request(["inc", msg[1]])
            return ["ok", 2 * inner[1], "extra"]
        if msg[0] == "deep":  # recursion through both sides: n levels of nested requests
            return ["ok", 0] if msg[1] == 0 else ["ok", 1 + b.request(["deep", msg[1] - 1])[1]]
        return ["raise", {"type": "KeyError", "args": [msg[0]]}]

    def a_deep(msg):
        return ["ok", 0] if msg[1] == 0 else ["ok", 1 + a.request(["deep", msg[1] - 1])[1]]

    (sa, sb), a, b = _pair(lambda m: a_deep(m) if m[0] == "deep" else a_handler(m), b_handler)
    server = _served(b)
    try:
        assert a.request(["double", 20]) == ["ok", 42, "extra"]
        assert log == [["inc", 20]]
        assert a.request(["nope"]) == ["raise", {"type": "KeyError", "args": ["nope"]}]
        assert a.request(["deep", 50]) == ["ok", 50]
    finally:
        sa.close()
        server.join(10)
        sb.close()
    assert not server.is_alive()  # serve_forever returns when the peer closes


def test_a_peer_that_closes_or_sends_garbage_is_peer_gone():
    (sa, sb), a, _ = _pair(lambda m: ["ok", None], lambda m: ["ok", None])
    sb.close()
    with pytest.raises(PeerGone):
        a.request(["anything"])
    sa.close()
    for garbage in ({"not": "a list"}, [], [1, 2], "text"):
        sa, sb = socket.socketpair()
        framing.send(sb.fileno(), garbage)
        with pytest.raises(PeerGone, match="malformed"):
            Channel(sa.fileno(), 1 << 20, None).request(["x"])
        sa.close()
        sb.close()


def test_a_frame_over_the_limit_is_peer_gone_not_an_allocation():
    sa, sb = socket.socketpair()
    try:
        sb.sendall(framing.HEADER.pack(1 << 40))  # claims a terabyte
        with pytest.raises(PeerGone, match="exceeds the limit"):
            Channel(sa.fileno(), 1 << 16, None).request(["x"])
    finally:
        sa.close()
        sb.close()
