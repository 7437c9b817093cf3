"""A fault-injecting HTTP proxy on loopback, between silt and the S3 server.

Each client connection carries one request: the proxy reads the request
head, draws a fate for it from a seeded random generator, and then

  * "error": answers 500 or 503 itself with an S3 error body (the request
    never reaches the server),
  * "drop_before": closes the client connection without forwarding
    (a connection reset before the server saw anything),
  * "drop_after": forwards the request, lets the server execute it, and
    closes the client connection instead of relaying the answer (the
    response is lost: the case a conditional commit PUT must resolve by
    reading the object back),
  * "delay": relays the answer after a pause,
  * "pass": relays the answer unchanged.

To keep one request per connection without parsing bodies, the request is
forwarded with `Connection: close` and the answer's head is rewritten to
say `Connection: close`; the client then opens a fresh connection for its
next request. Requests are relayed byte for byte otherwise, so SigV4
signatures stay valid (neither `Connection` nor `Host` is signed by silt:
the proxy is addressed as the endpoint, and the Host header it receives is
passed on as is).

The proxy runs its asyncio loop in a daemon thread of the test process (so
its clients must be other processes, or Python code that releases the GIL
while waiting on the network; deltalake's Rust calls do not):

    proxy = FaultProxy("127.0.0.1", minio_port, seed=7, error_rate=0.05, ...)
    proxy.start(); ...; proxy.stop(); proxy.counts  # Counter of fates
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections import Counter

_ERROR_BODY = (b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
               b"<Message>injected by s3_fault_proxy</Message></Error>")


class FaultProxy:
    def __init__(self, upstream_host: str, upstream_port: int, seed: int = 1,
                 error_rate: float = 0.0, drop_before_rate: float = 0.0,
                 drop_after_rate: float = 0.0, delay_rate: float = 0.0,
                 max_delay_s: float = 0.5, match=None):
        """`match(method, target)` limits faults to the requests it accepts
        (all by default); the others always pass."""
        self.upstream = (upstream_host, upstream_port)
        self.rng = random.Random(seed)
        self.rates = [("error", error_rate), ("drop_before", drop_before_rate),
                      ("drop_after", drop_after_rate), ("delay", delay_rate)]
        self.max_delay_s = max_delay_s
        self.match = match
        self.counts: Counter = Counter()
        self.requests: list[tuple[str, str, str]] = []  # (method, target, fate)
        self.enabled = True
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- lifecycle -------------------------------------------------------

    def start(self) -> "FaultProxy":
        ready = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()
            self._server.close()
            self._loop.run_until_complete(self._server.wait_closed())
            self._loop.close()

        self._thread = threading.Thread(target=run, name="s3-fault-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fault proxy did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)

    # --- one connection ---------------------------------------------------

    def _fate(self, method: str, target: str) -> tuple[str, float]:
        with self._lock:
            draw = self.rng.random()
            delay = self.rng.uniform(0.05, self.max_delay_s)
            fate = "pass"
            if self.enabled and (self.match is None or self.match(method, target)):
                edge = 0.0
                for name, rate in self.rates:
                    edge += rate
                    if draw < edge:
                        fate = name
                        break
            self.counts[fate] += 1
            self.requests.append((method, target, fate))
            return fate, delay

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        upstream_writer = None
        try:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                return
            request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
            parts = request_line.split(" ")
            method, target = (parts[0], parts[1]) if len(parts) >= 2 else ("?", "?")
            fate, delay = self._fate(method, target)

            if fate == "drop_before":
                _reset(writer)
                return
            if fate == "error":
                status = self.rng.choice([500, 503])
                code = b"InternalError" if status == 500 else b"ServiceUnavailable"
                body = _ERROR_BODY.replace(b"{code}", code)
                reason = b"Internal Server Error" if status == 500 else b"Service Unavailable"
                await _drain_body(reader, head)
                writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\n"
                             b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                             % (status, reason, len(body), body))
                await writer.drain()
                writer.close()
                return

            upstream_reader, upstream_writer = await asyncio.open_connection(*self.upstream)
            upstream_writer.write(_with_connection_close(head))
            pump = asyncio.ensure_future(_pump(reader, upstream_writer))
            try:
                response_head = await _read_final_head(upstream_reader, writer)
            except (asyncio.IncompleteReadError, ConnectionError):
                _reset(writer)
                return
            if fate == "drop_after":
                # The server has answered, so it executed the request; the
                # client never learns the outcome.
                _reset(writer)
                return
            if fate == "delay":
                await asyncio.sleep(delay)
            writer.write(_with_connection_close(response_head))
            while True:
                chunk = await upstream_reader.read(1 << 16)
                if not chunk:
                    break
                writer.write(chunk)
                await writer.drain()
            pump.cancel()
            writer.close()
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            _reset(writer)
        finally:
            if upstream_writer is not None:
                upstream_writer.close()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Closes abruptly (RST where possible) so the client sees a reset."""
    sock = writer.get_extra_info("socket")
    try:
        if sock is not None:
            import socket
            import struct
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return int(value.strip())
            except ValueError:
                return 0
    return 0


async def _drain_body(reader: asyncio.StreamReader, head: bytes) -> None:
    """Reads the request body the client sends (so that it reads our answer
    instead of failing on a closed socket while still sending)."""
    remaining = _content_length(head)
    while remaining > 0:
        chunk = await reader.read(min(remaining, 1 << 16))
        if not chunk:
            return
        remaining -= len(chunk)


def _with_connection_close(head: bytes) -> bytes:
    lines = head[:-4].split(b"\r\n")
    kept = [lines[0]] + [line for line in lines[1:]
                         if line.partition(b":")[0].strip().lower()
                         not in (b"connection", b"keep-alive")]
    kept.append(b"Connection: close")
    return b"\r\n".join(kept) + b"\r\n\r\n"


async def _read_final_head(upstream: asyncio.StreamReader, client: asyncio.StreamWriter) -> bytes:
    """The first non-1xx response head (1xx heads are passed through)."""
    while True:
        head = await upstream.readuntil(b"\r\n\r\n")
        status_line = head.split(b"\r\n", 1)[0].split(b" ")
        if len(status_line) >= 2 and status_line[1].startswith(b"1"):
            client.write(head)
            continue
        return head


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            chunk = await reader.read(1 << 16)
            if not chunk:
                return
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, OSError, asyncio.CancelledError):
        return
