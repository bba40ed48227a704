"""Length-prefixed JSON frames: the one wire format between the server, the worker, the judge and the candidate.

A frame is an 8-byte big-endian length followed by that many bytes of JSON. Blocking helpers serve the
processes inside the sandbox; ``Reader`` serves select() loops (the worker's supervision, the server's
deadlines). Every reader takes a size limit, so a peer cannot make another process allocate without bound.
stdlib only: this module also runs inside the sandbox.
"""

import enum
import json
import os
import struct

HEADER = struct.Struct(">Q")


class Status(str, enum.Enum):
    """A test's status: a str whose value is what goes on the wire and into every report (results.py explains each)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    KILLED = "killed"
    SYNTAX = "syntax"
    UNSUPPORTED = "unsupported"

    # str() and format() give the value, as enum.StrEnum's do (3.11+; Python 3.10 is supported)
    __str__ = str.__str__
    __format__ = str.__format__


STATUSES = tuple(Status)
# Not a test's status: the case ran and its format's verdict decides outside, on what the program printed or returned.
OK = "ok"
# The judge's ledger (worker.py): a page shared by the worker and its judge only, where the judge marks each
# test's status the moment it is decided (byte 1 + i; byte 0: the program loaded), before any record of it
# is held back. 0 is "not decided"; a status is its index here plus one.
LEDGER_STATUSES = (*STATUSES, OK)
# Its last LEDGER_INFORMED bytes (little-endian): k > 0 once the job's k-th test is *informed*, i.e. the judge
# sent the program something after that test's first frame to it (a second call, a callback's reply or exception,
# an __exit__, a teardown's call), marked before that frame leaves. From then on the program may know how the
# test goes, so a probe's kill no longer buys a rerun of it: the worker runs it on to its full limit, final.
LEDGER_INFORMED = 4
# The detail of a test that a batch deadline cut (the worker aborting it, or the pool settling it unrun).
CUT_DETAIL = "cut by the batch deadline"
# Label specs (keyed by the label's digest) a worker and its judge keep, and so the digests the pool knows a
# worker holds: the server sends a spec only with a job whose digest that worker has not seen.
SPEC_CACHE = 256


class FrameError(ValueError):
    """A frame over its size limit, or bytes that are not a frame of JSON."""


# json.dumps with separators builds a JSONEncoder and a C encoder per call: a third of the cost of a small
# frame. One C encoder serves every frame (same output; no cycle check: frames are trees built here, and the
# values in them come from wire.encode, which turns a cycle into a handle).
_ENCODE = json.encoder.c_make_encoder and json.encoder.c_make_encoder(
    None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)


def dumps(obj) -> bytes:
    if _ENCODE is None:  # an interpreter without the C accelerator
        return json.dumps(obj, separators=(",", ":")).encode()
    return "".join(_ENCODE(obj, 0)).encode()


# Likewise the C scanner, straight: json.loads adds an encoding sniff and two regular-expression passes for
# whitespace that frames written by dumps() never have. Anything else takes json.loads's own way.
# NaN: a fresh float per occurrence, as the program's own NaNs are distinct objects. json's own constant is one
# object for every NaN of every frame, and containers compare items by identity first: `[nan] == [nan]` held for
# two values of the program that plain Python finds unequal (assertEqual(f(x), f(x)), assertIn) (red team r28).
_DECODER = json.JSONDecoder(parse_constant=float)
_SCAN = json.scanner.c_make_scanner and json.scanner.c_make_scanner(_DECODER)


def loads(data: bytes):
    try:
        if _SCAN is not None:
            try:
                text = data.decode()
                obj, end = _SCAN(text, 0)
                if end == len(text):
                    return obj
            except (UnicodeDecodeError, StopIteration, ValueError):
                pass
        return json.loads(data, parse_constant=float)
    except (ValueError, RecursionError) as e:
        raise FrameError(f"malformed frame: {type(e).__name__}") from None


def pack(obj) -> bytes:
    """The frame holding obj."""
    body = dumps(obj)
    return HEADER.pack(len(body)) + body


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_exact(fd: int, n: int):
    """n bytes from fd, or None at end of file."""
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(fd, min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def send(fd: int, obj) -> None:
    write_all(fd, pack(obj))


def recv(fd: int, limit: int):
    """The next object on fd (blocking), or None at end of file; FrameError past `limit` bytes."""
    head = read_exact(fd, HEADER.size)
    if head is None:
        return None
    (n,) = HEADER.unpack(head)
    if n > limit:
        raise FrameError(f"frame of {n} bytes exceeds the limit of {limit}")
    body = read_exact(fd, n)
    if body is None:
        return None
    return loads(body)


class Reader:
    """Incremental frame decoder for select() loops: feed() the bytes read, get back complete objects.
    recv() is the blocking use on a descriptor this reader owns: one read usually brings a whole frame."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.pending: list = []

    def feed(self, data: bytes) -> list:
        if not self.buf and len(data) >= HEADER.size:  # the usual case: the read brought exactly one frame
            (n,) = HEADER.unpack_from(data)
            if len(data) == HEADER.size + n and n <= self.limit:
                return [loads(data[HEADER.size:])]
        self.buf += data
        out = []
        while len(self.buf) >= HEADER.size:
            (n,) = HEADER.unpack_from(self.buf)
            if n > self.limit:
                raise FrameError(f"frame of {n} bytes exceeds the limit of {self.limit}")
            if len(self.buf) < HEADER.size + n:
                break
            body = bytes(self.buf[HEADER.size:HEADER.size + n])
            del self.buf[:HEADER.size + n]
            out.append(loads(body))
        return out

    def recv(self, fd: int):
        """The next object on fd (blocking), or None at end of file."""
        while True:
            if self.pending:
                return self.pending.pop(0)
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.pending += self.feed(chunk)
