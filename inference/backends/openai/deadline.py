"""A wall-clock deadline for each request of an ``httpx2`` client, whatever the server sends.

httpx2's timeouts bound each network operation, not a request: a server that sends a byte
before every read timeout (a drip), an endless chunked body or an endless SSE stream keeps a
request going for as long as it likes, and the thread sending it (and so the process, which
waits for its threads) with it.

:func:`install_deadlines` gives a client's connection pools :class:`DeadlineBackend`, whose
connections read and write as usual outside a :func:`request_deadline` block. Inside one (a
``with`` block around the request, in the thread that sends it):

* every connect, TLS handshake, write and read waits at most until the block's deadline, and a
  read past it raises httpcore2's ``ReadTimeout`` (so the client reports a timeout);
* a read waits at most ``POLL_SECONDS`` at a time, and between two waits asks the block's
  ``stopped()``: a stopped request ends within ``POLL_SECONDS`` with :class:`RequestStopped`,
  even while the server sends nothing;
* the bytes read are counted, and more than ``max_bytes`` end the request with
  :class:`ResponseTooLarge` (an endless body at full speed would otherwise fill the memory
  before the deadline).

The block's limits live in a thread-local: a request is sent and read in the thread that
sends it (httpx2's sync client), which is the thread that opened the block.

Not bounded: the name lookup before a connection (``getaddrinfo`` cannot be interrupted; the
system resolver has its own timeouts).
"""

from __future__ import annotations

import math
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2

#: Longest single wait of a read inside a deadline block (seconds): how soon a stop is seen.
POLL_SECONDS = 0.25
#: Most bytes one response may take (headers and framing included): far above any answer the
#: backends ask for (a full-answer-prob echo of five long prompts is a few MB).
MAX_RESPONSE_BYTES = 64 << 20


class RequestStopped(Exception):
    """The request was abandoned because its block's ``stopped()`` said so."""


class ResponseTooLarge(Exception):
    """The response went past the block's ``max_bytes``."""


@dataclass
class _Limits:
    """What bounds the request the current thread is sending."""

    deadline: float
    stopped: Callable[[], bool]
    max_bytes: int
    received: int = 0

    def remaining(self) -> float:
        """Seconds left until the deadline (at most 0 once it has passed)."""
        return self.deadline - time.monotonic()

    def capped(self, timeout: float | None) -> float:
        """``timeout`` of one operation shortened to the time left (at most 0 once the
        deadline has passed: the caller raises the timeout of its operation)."""
        left = self.remaining()
        return left if timeout is None else min(timeout, left)

    def count(self, size: int) -> None:
        """Add ``size`` bytes received; ResponseTooLarge beyond ``max_bytes``."""
        self.received += size
        if self.received > self.max_bytes:
            raise ResponseTooLarge(
                f"the answer went past {self.max_bytes:,} bytes without ending")


_active = threading.local()


def _current() -> _Limits | None:
    return getattr(_active, "limits", None)


@contextmanager
def request_deadline(seconds: float, *, stopped: Callable[[], bool] = lambda: False,
                     max_bytes: int | None = None) -> Iterator[None]:
    """Bound the requests this thread sends inside the block to ``seconds`` of wall-clock
    time in all, abandon them once ``stopped()`` is true, and cap what they read at
    ``max_bytes`` (default :data:`MAX_RESPONSE_BYTES`; see the module docstring)."""
    previous = _current()
    limit = MAX_RESPONSE_BYTES if max_bytes is None else max_bytes
    _active.limits = _Limits(time.monotonic() + seconds, stopped, limit)
    try:
        yield
    finally:
        _active.limits = previous


class DeadlineStream(httpcore2.NetworkStream):
    """A network stream whose operations obey the current thread's :func:`request_deadline`."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        limits = _current()
        if limits is None:
            return self._inner.read(max_bytes, timeout)
        give_up = math.inf if timeout is None else time.monotonic() + timeout
        while True:
            if limits.stopped():
                raise RequestStopped("the request was stopped while it waited for the answer")
            wait = min(give_up, limits.deadline) - time.monotonic()
            if wait <= 0:
                raise httpcore2.ReadTimeout("no complete answer within the request's deadline")
            try:
                data = self._inner.read(max_bytes, min(wait, POLL_SECONDS))
            except httpcore2.ReadTimeout:
                continue  # one short wait ended: look at the stop and both limits again
            limits.count(len(data))
            return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # Not cut into short waits: a write that timed out part-way cannot be repeated.
        limits = _current()
        if limits is not None:
            timeout = limits.capped(timeout)
            if timeout <= 0:
                raise httpcore2.WriteTimeout("the request's deadline passed while sending")
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                    _connect_timeout(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore2.NetworkBackend):
    """A network backend whose streams are :class:`DeadlineStream`."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        return DeadlineStream(self._inner.connect_tcp(
            host, port, _connect_timeout(timeout), local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore2.NetworkStream:
        return DeadlineStream(self._inner.connect_unix_socket(
            path, _connect_timeout(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _connect_timeout(timeout: float | None) -> float | None:
    """A connect or handshake ``timeout`` capped by the current deadline; ConnectTimeout when
    the deadline has passed already."""
    limits = _current()
    if limits is None:
        return timeout
    capped = limits.capped(timeout)
    if capped <= 0:
        raise httpcore2.ConnectTimeout("the request's deadline passed before it connected")
    return capped


def install_deadlines(client: httpx2.Client) -> httpx2.Client:
    """``client`` with :class:`DeadlineBackend` under every connection pool it has (its own
    and those of the proxies the environment names), before it opens any connection.

    httpx2 takes no network backend, so this reaches into its transports' pools; a version
    that has none where expected raises RuntimeError rather than leave requests unbounded.
    """
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        if transport is None:
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if not isinstance(backend, httpcore2.NetworkBackend):
            raise RuntimeError(  # noqa: TRY004 - an unknown library version, not a bad argument
                f"cannot bound requests through {type(transport).__name__}: no httpcore2 "
                "connection pool with a network backend (an httpx2 version this project "
                "does not know)")
        if not isinstance(backend, DeadlineBackend):
            pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
    return client
