"""What stands between a visitor and the dashboard in the operator tests.

- :class:`Relay`: a TCP forwarder on a free loopback port in front of a server, passing the
  bytes through as they are (like ``socat``) or, as a minimal nginx ``proxy_pass`` does,
  rewriting the request's ``Host`` to the server's address and adding nothing else.
- :func:`script_run`: a scripted Streamlit client (no browser, no ``Origin`` header) that opens
  the WebSocket, asks for one page's script run and returns what the page sent back: the texts
  of its alerts and Markdown, and the labels of its buttons.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

#: How long a scripted page run may take before the client gives up.
SCRIPT_RUN_TIMEOUT_S = 120.0


class Relay:
    """A TCP forwarder from ``127.0.0.1:port`` to ``127.0.0.1:target_port``; with
    ``rewrite_host`` each connection's first request names the target as its Host."""

    def __init__(self, target_port: int, rewrite_host: bool = False) -> None:
        self.target_port = target_port
        self.rewrite_host = rewrite_host
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        if self.rewrite_host:
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(65536)
                if not chunk:
                    break
                head += chunk
            upstream.sendall(_with_host(head, f"127.0.0.1:{self.target_port}"))
        threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
        _pump(client, upstream)


def _with_host(head: bytes, host: str) -> bytes:
    """The request ``head`` (and whatever followed it) with its Host header set to ``host``."""
    header, _, rest = head.partition(b"\r\n\r\n")
    lines = [line for line in header.split(b"\r\n") if not line.lower().startswith(b"host:")]
    lines.insert(1, b"Host: " + host.encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + rest


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` into ``sink`` until either side closes."""
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for side in (source, sink):
            try:
                side.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@dataclass
class ScriptRun:
    """What one scripted page run sent back."""

    texts: list[str] = field(default_factory=list)
    buttons: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


def script_run(port: int, page: str, cookie: str | None = None,
               then: BackMsg | None = None, headers: dict[str, str] | None = None) -> ScriptRun:
    """Open a Streamlit session on ``127.0.0.1:port`` as a script would (no Origin; with
    ``cookie`` and ``headers`` when given), run ``page`` (its URL path; "" for Home) and collect
    its texts and buttons until the run ends; then send ``then`` on the same session."""
    headers = {**(headers or {}), **({"Cookie": cookie} if cookie else {})}
    seen = ScriptRun()
    with connect(f"ws://127.0.0.1:{port}/_stcore/stream", additional_headers=headers,
                 origin=None, open_timeout=60) as websocket:
        request = BackMsg()
        request.rerun_script.query_string = ""
        request.rerun_script.page_name = page
        websocket.send(request.SerializeToString())
        deadline = time.monotonic() + SCRIPT_RUN_TIMEOUT_S
        while True:
            message = ForwardMsg()
            message.ParseFromString(websocket.recv(timeout=max(1.0, deadline - time.monotonic())))
            if message.WhichOneof("type") == "script_finished":
                break
            if message.WhichOneof("type") == "delta":
                _collect(message, seen)
        if then is not None:
            websocket.send(then.SerializeToString())
            # The server handles messages in order: a heartbeat's answer follows the handling.
            beat = BackMsg()
            beat.app_heartbeat = True
            websocket.send(beat.SerializeToString())
            while True:
                answer = ForwardMsg()
                answer.ParseFromString(websocket.recv(timeout=60))
                if answer.WhichOneof("type") == "heartbeat_ack":
                    break
    return seen


def _collect(message: ForwardMsg, seen: ScriptRun) -> None:
    """Add the texts and button labels of one delta to ``seen``."""
    element = message.delta.new_element
    kind = element.WhichOneof("type")
    if kind == "alert":
        seen.texts.append(element.alert.body)
    elif kind == "markdown":
        seen.texts.append(element.markdown.body)
    elif kind in ("button", "form_submit_button"):
        seen.buttons.append(element.button.label)
