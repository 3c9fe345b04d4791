"""Limits on one download that no server can stretch: a total deadline, a least rate, and a
URL opener whose connections obey them.

A socket timeout bounds each network operation: a server that sends a byte before every
timeout (a drip), in the body or in the headers, keeps a download going for ever. A
:class:`TransferWatch` is a thread beside the download that ends it, by shutting its sockets
down, when

* it has taken longer than ``TransferLimits.total_seconds`` in all, or
* fewer than ``stall_bytes`` arrived in a window of ``stall_seconds`` (a stalled or dripping
  server; the windows follow one another from the start of the download).

The reading thread then sees its connection end; the download asks :meth:`TransferWatch.reason`
to tell such an end from the server's own. :func:`watched_opener` makes the ``urllib`` opener
whose HTTP and HTTPS connections hand their sockets to the watch (proxies from the environment
still apply: urllib's other handlers are the usual ones).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
import urllib.request
from dataclasses import dataclass
from typing import Any, Self

#: How often the watch looks at the clock and the byte count (seconds).
WATCH_SECONDS = 0.25


@dataclass(frozen=True)
class TransferLimits:
    """What one download may take: ``total_seconds`` in all, and at least ``stall_bytes`` in
    every ``stall_seconds``."""

    total_seconds: float = 6 * 3600.0
    stall_seconds: float = 120.0
    stall_bytes: int = 64 << 10

    def describe(self) -> str:
        """The limits in words, for the messages."""
        return (f"at most {_duration(self.total_seconds)} in all and at least "
                f"{self.stall_bytes:,} bytes every {_duration(self.stall_seconds)}")


def _duration(seconds: float) -> str:
    """``90 s``, ``2 min``, ``6 h``."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


class TransferWatch:
    """The thread that ends a download past its :class:`TransferLimits` (module docstring).
    Use as a context manager around the download; feed it the sockets (:meth:`attach`) and
    the bytes received (:meth:`received`)."""

    def __init__(self, limits: TransferLimits) -> None:
        self.limits = limits
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._count = 0
        self._reason: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="download watch", daemon=True)

    def __enter__(self) -> Self:
        self._started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    @property
    def reason(self) -> str | None:
        """Why the watch ended the download (None: it did not)."""
        with self._lock:
            return self._reason

    def attach(self, sock: socket.socket) -> None:
        """Watch ``sock``: it is shut down when a limit is passed (at once if one was)."""
        with self._lock:
            self._sockets.append(sock)
            ended = self._reason is not None
        if ended:
            _shut(sock)

    def received(self, count: int) -> None:
        """Count ``count`` more bytes of the download."""
        with self._lock:
            self._count += count

    def _watch(self) -> None:
        window_start, window_bytes = self._started, 0
        while not self._done.wait(WATCH_SECONDS):
            now = time.monotonic()
            with self._lock:
                count = self._count
            reason = None
            if now - self._started >= self.limits.total_seconds:
                reason = (f"it took longer than the {_duration(self.limits.total_seconds)} a "
                          "download may take")
            elif now - window_start >= self.limits.stall_seconds:
                if count - window_bytes < self.limits.stall_bytes:
                    reason = (f"fewer than {self.limits.stall_bytes:,} bytes arrived in "
                              f"{_duration(self.limits.stall_seconds)}, a stalled or dripping "
                              "server")
                window_start, window_bytes = now, count
            if reason is not None:
                self._end(reason)
                return

    def _end(self, reason: str) -> None:
        with self._lock:
            self._reason = reason
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    """Shut ``sock`` down both ways, which wakes a thread blocked reading it. The plain socket
    method even for a TLS socket (same descriptor): TLS's own would change the socket's state
    under the reading thread. A socket already closed or handed to TLS is left alone."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class _Watched:
    """A connection class part that hands its sockets to a :class:`TransferWatch`: the plain
    one as soon as it is connected (a TLS handshake is watched too), then ``self.sock``."""

    sock: Any

    def __init__(self, *args: Any, watch: TransferWatch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._watch = watch
        self._create_connection = self._connect_watched

    def _connect_watched(self, *args: Any, **kwargs: Any) -> socket.socket:
        sock = socket.create_connection(*args, **kwargs)
        self._watch.attach(sock)
        return sock

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]  # the http.client class after this one
        self._watch.attach(self.sock)


class _WatchedHTTPConnection(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPSConnection(_Watched, http.client.HTTPSConnection):
    pass


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: TransferWatch) -> None:
        super().__init__()
        self._watch = watch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req)

    def _connection(self, *args: Any, **kwargs: Any) -> http.client.HTTPConnection:
        return _WatchedHTTPConnection(*args, watch=self._watch, **kwargs)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: TransferWatch, context: ssl.SSLContext) -> None:
        super().__init__(context=context)
        self._watch = watch
        self._tls = context

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req, context=self._tls)

    def _connection(self, *args: Any, **kwargs: Any) -> http.client.HTTPSConnection:
        return _WatchedHTTPSConnection(*args, watch=self._watch, **kwargs)


def watched_opener(watch: TransferWatch, context: ssl.SSLContext
                   ) -> urllib.request.OpenerDirector:
    """A ``urllib`` opener like ``urlopen``'s (proxies, redirects) whose HTTP and HTTPS
    connections (``context`` for TLS) are watched by ``watch``."""
    return urllib.request.build_opener(_WatchedHTTPHandler(watch),
                                       _WatchedHTTPSHandler(watch, context))
