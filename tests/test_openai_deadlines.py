"""Endpoints whose answer never ends (issue 40, point 5): a run against them fails within
about 2 × the request timeout + 1.5 s, and SIGTERM ends such a run's process within 5 s.

Each endpoint is a local server that takes the request and then sends, for as long as the
client listens: a chunked body, a server-sent-events stream without a length, one byte a
second of a body, or its headers one byte at a time. Every byte arrives well within the
request timeout, so only a deadline on the whole request ends it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from inference.backends import ScoringError
from inference.backends.openai.scorer import OpenAIScorer
from tests.openai_support import cli_exit_code, openai_run_args, request

ROOT = Path(__file__).resolve().parents[1]
#: --request-timeout of the runs here: each byte of every endpoint comes sooner than this.
TIMEOUT = 2.0
#: What the README promises for a request that times out twice: 2 × timeout + one wait of at
#: most 1.5 × the backoff base (1 s).
PROMISED = 2 * TIMEOUT + 1.5
#: Room above the promise for a loaded machine (thread start-up, the failed status's write).
SLACK = 3.0
#: How long a test waits for a run that may never end (the code before the deadline).
PATIENCE = 60.0


class EndlessEndpoint:
    """A chat-completions endpoint that never finishes its answer; ``kind`` says how."""

    KINDS = ("chunked", "sse", "drip", "slow-headers")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.closing = threading.Event()
        self.arrivals: list[float] = []
        self.lock = threading.Lock()
        self.url = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with endpoint.lock:
                    endpoint.arrivals.append(time.monotonic())
                try:
                    getattr(self, "_" + endpoint.kind.replace("-", "_"))()
                except OSError:
                    pass  # the client gave up: what the test wants

            def _every(self, seconds: float, data: bytes) -> None:
                """Write ``data`` every ``seconds`` until the client or the test leaves."""
                while not endpoint.closing.wait(seconds):
                    self.wfile.write(data)
                    self.wfile.flush()

            def _chunked(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"1\r\n{\r\n")
                self._every(0.01, b"400\r\n" + b" " * 1024 + b"\r\n")

            def _sse(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")  # the body ends when the socket does
                self.end_headers()
                self._every(0.05, b'data: {"choices": []}\n\n')

            def _drip(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self._every(1.0, b" ")

            def _slow_headers(self) -> None:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Padding: ")
                self._every(0.5, b"a")

        return Handler


@contextmanager
def serving(kind: str) -> Iterator[EndlessEndpoint]:
    """An :class:`EndlessEndpoint` of ``kind`` on 127.0.0.1 for the block."""
    endpoint = EndlessEndpoint(kind)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), endpoint.handler())
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    endpoint.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield endpoint
    finally:
        endpoint.closing.set()
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def no_key_config(monkeypatch, tmp_path) -> None:
    """An operator file that pairs no local URL with a key, and no $OPENAI_BASE_URL."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    config = tmp_path / "operator.toml"
    config.write_text("[dashboard]\n", encoding="utf-8")
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(config))


@pytest.fixture(params=EndlessEndpoint.KINDS)
def endless(request, no_key_config):
    with serving(request.param) as endpoint:
        yield endpoint


def _in_thread(target) -> tuple[threading.Thread, dict]:
    """``target()`` started in a daemon thread; the dict gets its ``result`` or ``error`` and
    the monotonic time it ended (``ended``)."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = target()
        except BaseException as error:  # noqa: BLE001 - looked at by the test
            outcome["error"] = error
        outcome["ended"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_a_run_against_an_endless_answer_fails_within_two_timeouts(endless, demo_db, tmp_path,
                                                                   capsys):
    thread, outcome = _in_thread(lambda: cli_exit_code(openai_run_args(
        demo_db, tmp_path / "runs", endless.url, "--request-timeout", f"{TIMEOUT:g}")))
    thread.join(PATIENCE)
    assert not thread.is_alive(), f"the run against {endless.kind} still ran after {PATIENCE} s"
    assert outcome.get("result") == 1, outcome
    took = outcome["ended"] - endless.arrivals[0]
    err = capsys.readouterr().err.strip().splitlines()
    with capsys.disabled():  # the measurement, for `pytest -s`
        print(f"\n{endless.kind}: the run failed {took:.2f} s after its first request "
              f"(promise {PROMISED:g} s)")
    assert took <= PROMISED + SLACK, f"{endless.kind}: took {took:.1f} s"
    assert len(err) == 1 and err[0].startswith("error:"), err
    assert f"did not answer within {TIMEOUT:g} s" in err[0], err[0]
    # The four requests of the first batch, each tried twice; nothing more.
    assert len(endless.arrivals) <= 2 * 4


def test_an_answer_past_the_size_limit_fails_at_once(no_key_config, monkeypatch):
    """An endless body sent at full speed: the request fails once it passes the size limit
    (made 64 KiB here), long before its deadline, and is not asked again."""
    monkeypatch.setattr("inference.backends.openai.deadline.MAX_RESPONSE_BYTES", 64 << 10)
    with serving("chunked") as endless:
        scorer = OpenAIScorer("endless", base_url=endless.url, timeout=PATIENCE)
        thread, outcome = _in_thread(lambda: scorer.score([request("Plarge")]))
        thread.join(PATIENCE)
        assert not thread.is_alive(), f"the request still ran after {PATIENCE} s"
        error = outcome.get("error")
        assert isinstance(error, ScoringError), outcome
        assert "Plarge shuffle 0" in str(error) and "went past 65,536 bytes" in str(error)
        assert len(endless.arrivals) == 1, "an answer too large is not asked again"


def test_sigterm_ends_a_run_waiting_on_an_endless_answer_within_seconds(endless, demo_db,
                                                                         tmp_path):
    """The run's request timeout (60 s) is far away: the process still ends within 5 s of
    SIGTERM, its requests in flight abandoned instead of waited for."""
    log = tmp_path / "run.log"
    words = openai_run_args(demo_db, tmp_path / "runs", endless.url, "--request-timeout", "60")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "cli", *words], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: len(endless.arrivals) >= 4 or process.poll() is not None,
                  "the first batch's requests in flight", log)
        assert process.poll() is None, log.read_text()
        asked = time.monotonic()
        process.send_signal(signal.SIGTERM)
        try:
            code = process.wait(PATIENCE)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{endless.kind}: the run still lived {PATIENCE} s after "
                                 f"SIGTERM\n{log.read_text()[-2000:]}") from None
        took = time.monotonic() - asked
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    print(f"{endless.kind}: the process ended {took:.2f} s after SIGTERM")
    assert code == 130, log.read_text()[-2000:]
    assert "cancelled" in log.read_text()
    assert took < 5.0, f"{endless.kind}: the process took {took:.1f} s to end"


def _wait_for(predicate, what: str, log: Path, timeout: float = 120.0) -> None:
    """Poll ``predicate`` until it holds; AssertionError naming ``what`` (with the process's
    output) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what}: not reached in {timeout:g} s\n{log.read_text()[-2000:]}")
