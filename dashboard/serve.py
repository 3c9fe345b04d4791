"""``make run``: start the dashboard and hand the person at this machine the operator link.

    python -m dashboard.serve [STREAMLIT FLAGS …]

Draws a fresh operator token, starts ``streamlit run app.py`` with it in the server's
environment (:data:`dashboard.operator_proof.TOKEN_ENV_VAR`; Streamlit's flags pass through),
waits until the server answers, then prints the operator link and opens it in this machine's
browser when there is a screen. Whoever opens the link is the operator
(:mod:`dashboard.operator_proof`); anyone else, including a browser that opens the plain URL,
is a viewer. Ctrl-C (or SIGTERM) stops the server.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import sys
import time
import urllib.request
import webbrowser
from collections.abc import Sequence
from pathlib import Path

from dashboard.operator_proof import TOKEN_ENV_VAR, operator_link
from workflows.background import Attached, start_attached

APP = Path(__file__).resolve().parent.parent / "app.py"
#: Streamlit's own first port; the next free one is taken when it is busy.
FIRST_PORT = 8501
#: How long the server may take to answer its health check before the launcher gives up.
START_TIMEOUT_S = 120.0


def flag_value(flags: Sequence[str], name: str) -> str | None:
    """The value of ``--name VALUE`` or ``--name=VALUE`` in ``flags`` (the last one wins)."""
    value = None
    for index, flag in enumerate(flags):
        if flag == f"--{name}" and index + 1 < len(flags):
            value = flags[index + 1]
        elif flag.startswith(f"--{name}="):
            value = flag.split("=", 1)[1]
    return value


def free_port(first: int = FIRST_PORT, tries: int = 100) -> int:
    """The first port from ``first`` on which nothing listens on loopback."""
    for port in range(first, first + tries):
        with socket.socket() as probe:
            # As a server binds: a port whose last connections linger in TIME_WAIT is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port in {first}–{first + tries - 1}")


def wait_until_serving(process: Attached, port: int, timeout_s: float) -> bool:
    """Whether the server on ``port`` answered its health check before ``timeout_s`` (False
    as soon as the process ended)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                        timeout=2) as reply:
                if reply.status == 200:
                    return True
        except OSError:
            time.sleep(0.2)  # polling a server that is starting, not synchronising a test
    return False


def has_screen() -> bool:
    """Whether a browser window can open here (Streamlit's own rule on Linux: a display)."""
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def serve(flags: Sequence[str]) -> int:
    """Run the dashboard with Streamlit ``flags``; the server's exit status."""
    token = secrets.token_urlsafe(32)
    given_port = flag_value(flags, "server.port")
    port = int(given_port) if given_port else free_port()
    port_flags = [] if given_port else ["--server.port", str(port)]
    headless = flag_value(flags, "server.headless") == "true" or not has_screen()
    command = [sys.executable, "-m", "streamlit", "run", str(APP), *flags, *port_flags,
               # The launcher opens the browser itself, on the link with the token.
               "--server.headless", "true"]
    process = start_attached(command, {**os.environ, TOKEN_ENV_VAR: token}, cwd=APP.parent)
    signal.signal(signal.SIGTERM, lambda *_: process.terminate())
    try:
        if wait_until_serving(process, port, START_TIMEOUT_S):
            address = flag_value(flags, "server.address")
            if address not in (None, "127.0.0.1", "localhost", "::1"):
                print(f"\n  Served on {address}: every browser is a viewer; runs start from "
                      "the command line.\n", flush=True)
            else:
                link = operator_link(port, token)
                print(f"\n  Operator link: open it in this machine's browser to launch runs "
                      f"(anyone else is a viewer):\n  {link}\n", flush=True)
                if not headless:
                    webbrowser.open(link)
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        return process.wait()


def main(argv: Sequence[str] | None = None) -> None:
    sys.exit(serve(list(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    main()
