"""The real dashboard for a browser, as the Chromium tests (``tests/browser_support.py``) and
``bench.browser_pages`` both drive it: Debian's Chromium and its launch flags, and
:func:`serving`, the Streamlit server of ``app.py`` on a store (a free localhost port, its log
under ``test-artifacts/``, the operator's token of :data:`OPERATOR_TOKEN`)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update"]

#: The operator's secret of every server :func:`serving` starts (``dashboard.operator_proof``):
#: a tab proves it with ``tests.browser_support.grant_operator_cookie``; any other tab is a
#: viewer.
OPERATOR_TOKEN = "test-operator-token-0123456789"
TOKEN_ENV_VAR = "ENEM_OPERATOR_TOKEN"


def free_port() -> int:
    """A TCP port free on localhost now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(db: Path, log_name: str) -> Iterator[str]:
    """A real Streamlit server of ``app.py`` on ``db``; yields its base URL."""
    port = free_port()
    env = {**os.environ, "ENEM_DB": str(db), TOKEN_ENV_VAR: OPERATOR_TOKEN}
    log = ARTIFACTS.parent / log_name
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
             "--server.headless", "true", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
             "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    with running(process, base, log):
        yield base


@contextmanager
def running(process: subprocess.Popen, base: str, log: Path) -> Iterator[None]:
    """Wait until the Streamlit ``process`` answers its health check at ``base`` (a test
    failure naming ``log`` when it does not within a minute); stop it on leaving."""
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"Streamlit did not start; see {log}", pytrace=False)
            time.sleep(0.3)
        yield
    finally:
        stop(process)


def stop(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """Terminate ``process`` and wait for it; kill it when it has not ended in ``timeout`` s."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
