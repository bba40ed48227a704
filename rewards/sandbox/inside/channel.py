"""The judge <-> candidate channel: nested request/reply over one socket, either side may call the other.

A request is a list whose first item names the operation; a reply is ``["ok", value, *extra]`` or
``["raise", exception-description]``. While a side waits for its reply it serves the peer's requests
(a candidate function calling back a function the test passed in), so replies nest like calls.
stdlib only: this module runs inside the sandbox.
"""

from . import framing

REPLIES = ("ok", "raise")


class PeerGone(Exception):
    """The other side closed the channel, died, or sent something that is not a frame."""


class Channel:
    """One end of the channel; handler(request) -> reply serves the peer's requests."""

    def __init__(self, fd: int, limit: int, handler, reader=None) -> None:
        self.fd = fd
        self.handler = handler
        self.reader = reader or framing.Reader(limit)
        self.on_send = None  # called before each frame leaves (the judge marks what the program may learn)

    def _recv(self):
        try:
            msg = self.reader.recv(self.fd)
        except (OSError, framing.FrameError) as e:
            raise PeerGone(str(e)) from None
        if msg is None:
            raise PeerGone("the channel was closed")
        if type(msg) is not list or not msg or type(msg[0]) is not str:
            raise PeerGone("malformed message")
        return msg

    def send(self, msg) -> None:
        if self.on_send is not None:
            self.on_send()
        try:
            framing.send(self.fd, msg)
        except OSError as e:
            raise PeerGone(str(e)) from None

    def request(self, msg) -> list:
        """Send a request and return its reply, serving the peer's own requests meanwhile."""
        self.send(msg)
        while True:
            reply = self._recv()
            if reply[0] in REPLIES:
                return reply
            self.send(self.handler(reply))

    def serve_forever(self) -> None:
        """Answer requests until the peer closes the channel."""
        while True:
            try:
                msg = self._recv()
            except PeerGone:
                return
            self.send(self.handler(msg))
