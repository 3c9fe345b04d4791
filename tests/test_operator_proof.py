"""Operators by proof (``dashboard.operator_proof``, ``dashboard.access``): only a session that
showed the server's secret operates, and headers only ever take that away.

- The launcher ``make run`` calls prints a link with a token; the browser that opens it is the
  operator (in this tab and, through the cookie it keeps, in the next), the token leaves the
  URL, and a browser opening the plain URL or a wrong token is a viewer.
- Through a header-less relay (a TCP forwarder, or one rewriting ``Host`` as a minimal nginx
  does), a scripted WebSocket client without ``Origin`` and a real Chromium are viewers; a
  proxy header (``Via``) demotes even the operator's cookie.
- A viewer's "clear caches" message is refused; the secrets are compared safely.
"""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg

from dashboard.access import OPERATOR_STATE, session_facts
from dashboard.cache_guard import operator_only
from dashboard.operator_proof import (
    MIN_TOKEN_LENGTH,
    TOKEN_ENV_VAR,
    cookie_name,
    proxy_proof,
    secrets_match,
)
from dashboard.serve import flag_value
from dashboard.serve import free_port as launcher_free_port
from inference.operator_config import PROXY_SECRET_HEADER
from testbed.browser import stop
from tests.browser_support import (
    ARTIFACTS,
    OPERATOR_TOKEN,
    PAGE_TIMEOUT_MS,
    ROOT,
    free_port,
    grant_operator_cookie,
    serving,
)
from tests.relay_support import Relay, script_run

VIEWER_NOTE = "is for this dashboard's operator"
NO_LINK = "has not opened the operator link"


@pytest.fixture(scope="module")
def demo_server(pages_demo_db) -> Iterator[str]:
    """The real server of ``app.py`` on the demo store, with the tests' operator token."""
    with serving(pages_demo_db, "streamlit-operator-proof.log") as base:
        yield base


def _port(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def _operator_cookie(port: int) -> str:
    return f"{cookie_name(port)}={OPERATOR_TOKEN}"


def _runs_page(page, url: str) -> str:
    """Open the Runs page at ``url``; its text once the launch form or the viewer's note is
    drawn."""
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_role("heading", name="Model runs", level=1).wait_for(timeout=PAGE_TIMEOUT_MS)
    main = page.locator("[data-testid='stMain']")
    launch = page.get_by_role("button", name="Launch", exact=True)
    launch.or_(main.get_by_text(VIEWER_NOTE)).first.wait_for(timeout=PAGE_TIMEOUT_MS)
    return main.inner_text()


def _is_operator(page) -> bool:
    return page.get_by_role("button", name="Launch", exact=True).count() == 1


def test_the_scripted_client_tells_an_operator_from_a_viewer(demo_server):
    """The control for the relay tests: straight to the server, the cookie makes the scripted
    client an operator, its absence a viewer."""
    port = _port(demo_server)
    operator = script_run(port, "Runs", cookie=_operator_cookie(port))
    assert "Launch" in operator.buttons and VIEWER_NOTE not in operator.text
    viewer = script_run(port, "Runs")
    assert "Launch" not in viewer.buttons
    assert VIEWER_NOTE in viewer.text and NO_LINK in viewer.text


def test_a_via_header_demotes_even_the_operators_cookie(demo_server):
    port = _port(demo_server)
    seen = script_run(port, "Runs", cookie=_operator_cookie(port),
                      headers={"Via": "1.1 relay.example"})
    assert "Launch" not in seen.buttons and VIEWER_NOTE in seen.text


@pytest.mark.parametrize("rewrite_host", [False, True], ids=["tcp-forwarder", "nginx-like"])
def test_a_header_less_relay_makes_a_scripted_client_a_viewer(demo_server, rewrite_host):
    relay = Relay(_port(demo_server), rewrite_host=rewrite_host)
    try:
        seen = script_run(relay.port, "Runs")
    finally:
        relay.close()
    assert "Launch" not in seen.buttons
    assert VIEWER_NOTE in seen.text


def test_a_browser_through_a_relay_is_a_viewer_and_a_proxy_header_demotes_the_cookie(
        demo_server, browser):
    relay = Relay(_port(demo_server))
    try:
        through = browser.new_context()
        text = _runs_page(through.new_page(), f"http://localhost:{relay.port}/Runs")
        assert VIEWER_NOTE in text and not _is_operator(through.pages[0])
        through.close()
    finally:
        relay.close()
    # The operator's cookie, but a header saying a proxy relayed the request (Chromium will
    # not send Via itself: the scripted client does, below).
    via = browser.new_context(extra_http_headers={"X-Forwarded-Proto": "https"})
    page = via.new_page()
    grant_operator_cookie(page, demo_server)
    assert VIEWER_NOTE in _runs_page(page, f"{demo_server}/Runs") and not _is_operator(page)
    via.close()
    # The same cookie without it: the operator.
    direct = browser.new_context()
    page = direct.new_page()
    grant_operator_cookie(page, demo_server)
    _runs_page(page, f"{demo_server}/Runs")
    assert _is_operator(page)
    direct.close()


def test_a_viewers_clear_cache_message_is_refused(demo_server):
    log = ARTIFACTS.parent / "streamlit-operator-proof.log"
    refusals = log.read_text().count("asked to clear the caches; refused")
    clear = BackMsg()
    clear.clear_cache = True
    script_run(_port(demo_server), "", then=clear)
    assert log.read_text().count("asked to clear the caches; refused") == refusals + 1
    # The operator's own message is carried out: no new refusal.
    script_run(_port(demo_server), "", cookie=_operator_cookie(_port(demo_server)), then=clear)
    assert log.read_text().count("asked to clear the caches; refused") == refusals + 1


@pytest.fixture(scope="module")
def launched(pages_demo_db) -> Iterator[str]:
    """``python -m dashboard.serve`` as ``make run`` starts it (headless, a free port); yields
    the operator link it printed."""
    port = free_port()
    environment = {key: value for key, value in os.environ.items()
                   if key not in (TOKEN_ENV_VAR, "ENEM_OPERATOR_CONFIG")}
    process = subprocess.Popen(
        [sys.executable, "-m", "dashboard.serve", "--server.headless", "true",
         "--server.port", str(port), "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**environment, "ENEM_DB": str(pages_demo_db)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or ()],
                     daemon=True).start()
    try:
        while True:
            line = lines.get(timeout=120)
            found = re.search(r"http://localhost:\d+/\?token=[\w-]+", line)
            if found:
                yield found.group(0)
                break
    finally:
        stop(process, timeout=15)


def test_the_launchers_link_makes_this_browser_the_operator_and_no_other(launched, browser):
    base, token = launched.split("/?token=")
    assert len(token) >= MIN_TOKEN_LENGTH
    operator = browser.new_context()
    page = operator.new_page()
    page.goto(launched, wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]',
                           timeout=PAGE_TIMEOUT_MS)
    page.wait_for_function("!location.search.includes('token=')", timeout=PAGE_TIMEOUT_MS)
    cookies = {cookie["name"]: cookie["value"] for cookie in operator.cookies()}
    assert cookies[cookie_name(_port(base))] == token
    # A new tab of the same browser: the cookie carries the proof.
    second = operator.new_page()
    _runs_page(second, f"{base}/Runs")
    assert _is_operator(second)
    operator.close()
    # Another browser opening the plain URL, or a wrong token: a viewer.
    other = browser.new_context()
    page = other.new_page()
    assert NO_LINK in _runs_page(page, f"{base}/Runs") and not _is_operator(page)
    page.goto(f"{base}/?token={'x' * 40}", wait_until="domcontentloaded")
    page.get_by_text("operator token is not this server's").wait_for(timeout=PAGE_TIMEOUT_MS)
    assert NO_LINK in _runs_page(page, f"{base}/Runs") and not _is_operator(page)
    other.close()


def test_secrets_are_compared_only_when_they_could_be_secret(monkeypatch):
    assert secrets_match("a" * MIN_TOKEN_LENGTH, "a" * MIN_TOKEN_LENGTH)
    assert not secrets_match("a" * MIN_TOKEN_LENGTH, "b" * MIN_TOKEN_LENGTH)
    assert not secrets_match("short", "short")  # a guessable secret is no proof
    assert not secrets_match("", "")
    assert not secrets_match(None, "a" * MIN_TOKEN_LENGTH)
    assert not secrets_match(object(), "a" * MIN_TOKEN_LENGTH)
    monkeypatch.setenv("LAB_PROXY_SECRET", "s" * 32)
    assert proxy_proof({PROXY_SECRET_HEADER.lower(): "s" * 32}, "LAB_PROXY_SECRET")
    assert not proxy_proof({PROXY_SECRET_HEADER: "t" * 32}, "LAB_PROXY_SECRET")
    assert not proxy_proof({PROXY_SECRET_HEADER: "s" * 32}, None)
    monkeypatch.delenv("LAB_PROXY_SECRET")
    assert not proxy_proof({PROXY_SECRET_HEADER: ""}, "LAB_PROXY_SECRET")
    assert cookie_name(8501) != cookie_name(8502)


@pytest.mark.parametrize("header", ["Via", "X-Forwarded-Proto", "X-Forwarded-For", "Forwarded",
                                    "X-Real-IP", "X-Forwarded-Host"])
def test_any_proxy_header_marks_a_relayed_request(header):
    facts = session_facts({"Host": "localhost:8501", header: "x"}, "127.0.0.1", None, {},
                          trusted_header=False, proof=True)
    assert facts.forwarded


def test_only_an_operators_session_clears_the_caches():
    cleared: list[str] = []
    guarded = operator_only(lambda session: cleared.append(session.name))
    for name, state in (("viewer", {OPERATOR_STATE: False}), ("unchecked", {}),
                        ("truthy-but-not-true", {OPERATOR_STATE: "yes"}),
                        ("operator", {OPERATOR_STATE: True})):
        guarded(SimpleNamespace(name=name, _session_state=state))
    assert cleared == ["operator"]


def test_the_launcher_reads_streamlits_flags_and_skips_busy_ports():
    flags = ["--server.port", "9000", "--server.headless=true", "--server.port=9001"]
    assert flag_value(flags, "server.port") == "9001"  # the last one wins, as in Streamlit
    assert flag_value(flags, "server.headless") == "true"
    assert flag_value(flags, "server.address") is None
    with socket.create_server(("127.0.0.1", 0)) as busy:
        taken = busy.getsockname()[1]
        assert launcher_free_port(taken, tries=5) != taken
