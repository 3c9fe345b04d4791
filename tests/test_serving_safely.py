"""Safe to serve, tried as an attacker would: the real server started as the README starts it
(``streamlit run app.py`` from the repository root, so ``.streamlit/config.toml`` applies) with
a canary API key in its environment and a local header-logging server standing for the
attacker's URL, driven by a real Chromium.

- it listens on loopback only (``ss``), and a WebSocket whose Host and Origin name another
  domain (DNS rebinding) is refused;
- the operator's Runs page offers configured endpoints and allowed models, never a typed URL
  or path, and an imported question's remote image is never fetched: the logging server gets
  no request at all, so none carries the key;
- served to others (``--server.address 0.0.0.0``) or behind a proxy, every page is a viewer's,
  even for a browser holding the operator's cookie: no control that starts, cancels, removes or
  writes anything, and no path of the server; no run starts;
- behind an authenticating proxy, the operators it names (and only they) may launch, and only
  on requests carrying the secret the proxy shares with the server: a local process sending the
  identity header without it is a viewer.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from inference.operator_config import PROXY_SECRET_HEADER
from inference.plan import RunSpec
from store.connection import open_reader
from store.layout import copy_store
from tests.browser_support import (
    BROWSER_ARGS,
    CHROMIUM,
    OPERATOR_TOKEN,
    TOKEN_ENV_VAR,
    grant_operator_cookie,
    running,
    wait_until_still,
)
from tests.browser_support import free_port as _free_port
from tests.browser_support import require_browser as _require_browser
from workflows.question_import import import_questions
from workflows.runs.folder import RunFolder
from workflows.runs.service import list_runs

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "test-artifacts"
SCREENSHOTS = LOGS / "browser"
CANARY = "sk-canary-must-never-leave-4242"
PAGE_TIMEOUT_MS = 180_000
#: Buttons that start, cancel, remove or write something: none may reach a viewer.
OPERATOR_BUTTONS = ("Launch", "Launch CAT", "Cancel", "Remove", "Launch the missing random runs",
                    "Build the report", "Derive attributes from the stored question texts",
                    "Save corrections", "Fetch the paper's results")


class _Attacker(BaseHTTPRequestHandler):
    """The attacker's server: records every request (path and Authorization header)."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def _record(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _record

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def attacker() -> Iterator[str]:
    _Attacker.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def store(tmp_path_factory, pages_demo_db, attacker) -> Path:
    """The demo with a question text that embeds the attacker's image, and a failed run whose
    error names a path of the server."""
    folder = tmp_path_factory.mktemp("serving")
    db = folder / "store" / "enem.duckdb"
    db.parent.mkdir()
    copy_store(pages_demo_db, db)
    con = open_reader(db)
    item_id, area, key, *options = con.execute(
        "SELECT t.item_id, i.area, t.key, option_a, option_b, option_c, option_d, option_e "
        "FROM question_texts t JOIN (SELECT DISTINCT year, item_id, area FROM items) i "
        "USING (year, item_id) WHERE year = 2023 AND language = 'pt' AND NOT annulled "
        "ORDER BY item_id LIMIT 1").fetchone()
    con.close()
    texts = folder / "planted.jsonl"
    texts.write_text(json.dumps({
        "year": 2023, "item_id": item_id, "area": area, "language": "pt", "options": options,
        "key": key, "annulled": False,
        "stem": f"Look: ![chart]({attacker}/stem.png) and ![ref][r]\n\n[r]: {attacker}/ref.png",
        "source": "planted"}) + "\n", encoding="utf-8")
    import_questions(db, texts, "project")
    failed = RunSpec(model="random-baseline", backend="random", year=2023, areas=("CN",),
                     n_shuffles=2)
    run = RunFolder(db.parent / "runs" / failed.run_id)
    run.write_json("spec.json", failed.to_dict())
    run.update_status(status="failed", units_done=1, units_total=45,
                      error=f"OSError: {folder}/models/secret-model/weights.bin is unreadable")
    (db.parent / "item.txt").write_text(str(item_id))
    return db


@contextmanager
def served(db: Path, name: str, *flags: str, env: dict[str, str] | None = None
           ) -> Iterator[int]:
    """``streamlit run app.py`` from the repository root as ``make run`` starts it (plus a free
    port and headless), with the canary key in its environment; yields the port."""
    port = _free_port()
    environment = {key: value for key, value in os.environ.items()
                   if key != "ENEM_OPERATOR_CONFIG"}
    environment.update({"ENEM_DB": str(db), "OPENAI_API_KEY": CANARY,
                        TOKEN_ENV_VAR: OPERATOR_TOKEN, **(env or {})})
    log = LOGS / f"streamlit-{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--browser.gatherUsageStats",
             "false", "--server.headless", "true", "--server.port", str(port), *flags],
            cwd=ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT)
    with running(process, f"http://127.0.0.1:{port}", log):
        yield port


def websocket_status(port: int, host: str, origin: str) -> str:
    """The status line the server answers a WebSocket upgrade of ``/_stcore/stream`` with."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall((f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\n"
                            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                            f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\n\r\n").encode())
        return connection.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def listening_addresses(port: int) -> set[str]:
    """The local addresses on which something listens on TCP ``port``, as ``ss`` lists them."""
    listed = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True,
                            text=True, check=True).stdout
    return {line.split()[3].rsplit(":", 1)[0] for line in listed.splitlines() if line.strip()}


def open_page(page, url: str, title: str) -> str:
    """Go to ``url``, wait for the page's title and for its script to finish; its text."""
    page.goto(url, wait_until="domcontentloaded")
    page.get_by_role("heading", level=1).filter(has_text=title).wait_for(timeout=PAGE_TIMEOUT_MS)
    wait_until_still(page)
    return page.locator("[data-testid='stMain']").inner_text()


def assert_viewer(page, base: str, db: Path, shot: str) -> None:
    """Every page that can start or write something shows a viewer none of it, nor a path."""
    # Adaptive testing's launch form is on its "Live CAT" tab.
    for path, title in (("Runs", "Model runs"),
                        ("Adaptive_testing?section=Live+CAT", "Adaptive testing"),
                        ("Paper_tables", "Paper tables"), ("Data", "Data")):
        text = open_page(page, f"{base}/{path}", title)
        for label in OPERATOR_BUTTONS:
            assert page.get_by_role("button", name=label, exact=True).count() == 0, (path, label)
        assert page.locator("[data-testid='stMain'] [data-testid='stTextInput']").count() == 0, path
        for secret in (str(ROOT), str(db.parent), str(db.parent.parent), "/.venv", CANARY):
            assert secret not in text, (path, secret)
        if path == "Runs":
            assert "is for this dashboard's operator" in text
            assert "weights.bin is unreadable" in text and "secret-model/" not in text
        page.screenshot(path=str(SCREENSHOTS / f"viewer_{shot}_{path.split('?')[0].lower()}.png"),
                        full_page=True)
    # Home's offer to fetch real data, opened: the commands, no button, no path of the server.
    open_page(page, f"{base}/", "When an LLM passes ENEM")
    page.get_by_text("Add real data").click()
    page.get_by_text("INEP's microdata of ENEM").wait_for(timeout=PAGE_TIMEOUT_MS)
    # The command and the viewer's note under it are drawn after the table above them (and a
    # rerun may redraw the page meanwhile): wait until the page shows both.
    page.wait_for_function(
        "() => { const t = document.querySelector(\"[data-testid='stMain']\").innerText;"
        " return t.includes('enem-llm fetch inep --year') &&"
        " t.includes(\"Starting a fetch from this page is for this dashboard's operator\"); }",
        timeout=PAGE_TIMEOUT_MS)
    text = page.locator("[data-testid='stMain']").inner_text()
    assert "enem-llm fetch inep --year" in text
    assert page.get_by_role("button", name=re.compile(r"^Fetch ")).count() == 0
    for secret in (str(ROOT), str(db.parent), str(db.parent.parent), "/.venv", CANARY):
        assert secret not in text, ("Home", secret)
    page.screenshot(path=str(SCREENSHOTS / f"viewer_{shot}_home.png"), full_page=True)


def test_the_readme_server_is_safe_to_serve(store, attacker):
    sync_playwright = _require_browser()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    runs_before = [run.run_id for run in list_runs(store.parent / "runs")]
    item_id = (store.parent / "item.txt").read_text()
    with served(store, "safe-local") as port, sync_playwright() as playwright:
        # Nobody else on the network reaches it, and a rebinding page's socket is refused.
        assert listening_addresses(port) == {"127.0.0.1"}
        assert " 101 " in websocket_status(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")
        refused = websocket_status(port, f"rebind.example:{port}", f"http://rebind.example:{port}")
        assert " 101 " not in refused and re.match(r"HTTP/1\.1 4\d\d", refused), refused

        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1800})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            base = f"http://127.0.0.1:{port}"
            # Without the operator link's cookie, the browser at this machine is a viewer.
            assert_viewer(page, base, store, "no_link")
            # The operator at this machine: endpoints and models from lists, no typed URL.
            grant_operator_cookie(page, base)
            open_page(page, f"{base}/Runs", "Model runs")
            page.get_by_role("combobox", name="Backend").click()
            page.get_by_role("option", name="openai", exact=True).click()
            page.get_by_text("Model name at this endpoint").wait_for(timeout=PAGE_TIMEOUT_MS)
            page.get_by_role("combobox", name="Endpoint").click()
            offered = page.get_by_role("option").all_inner_texts()
            page.keyboard.press("Escape")
            assert offered == ["openai"], offered
            assert page.get_by_label("API base URL (openai backend)").count() == 0
            page.get_by_role("combobox", name="Backend").click()
            page.get_by_role("option", name="transformers", exact=True).click()
            page.get_by_text("Model name at this endpoint").wait_for(state="detached",
                                                                     timeout=PAGE_TIMEOUT_MS)
            # The operator at the machine: the bundled model first, a typed one last; no path
            # field until they ask for one.
            page.get_by_role("combobox", name="Model", exact=True).click()
            offered = page.get_by_role("option").all_inner_texts()
            page.keyboard.press("Escape")
            assert offered[0].startswith("SmolLM2-135M-Instruct (bundled"), offered
            assert offered[-1].startswith("Another model"), offered
            typed = page.locator("[data-testid='stMain'] [data-testid='stTextInput'] label")
            assert typed.all_inner_texts() == ["Model family (for grouping)"]
            page.screenshot(path=str(SCREENSHOTS / "operator_runs.png"), full_page=True)
            # The planted question: shown as text, its images never fetched.
            text = open_page(page, f"{base}/Item_explorer?item={item_id}",
                             "Item explorer")
            assert "![chart](" in text
            assert page.locator("[data-testid='stMain'] img[src*='127.0.0.1']").count() == 0
            page.screenshot(path=str(SCREENSHOTS / "planted_text.png"), full_page=True)

            # A proxy in front of the loopback server makes its visitors viewers, even one
            # holding the operator's cookie.
            proxied = browser.new_page(viewport={"width": 1440, "height": 1800},
                                       extra_http_headers={"X-Forwarded-For": "203.0.113.5"})
            grant_operator_cookie(proxied, base)
            assert_viewer(proxied, base, store, "proxied")
            assert not errors, errors
        finally:
            browser.close()
    with served(store, "safe-shared", "--server.address", "0.0.0.0",
                "--server.allowedHosts", "127.0.0.1") as port, sync_playwright() as playwright:
        assert listening_addresses(port) == {"0.0.0.0"}
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1800})
            grant_operator_cookie(page, f"http://127.0.0.1:{port}")
            assert_viewer(page, f"http://127.0.0.1:{port}", store, "shared")
        finally:
            browser.close()
    assert [run.run_id for run in list_runs(store.parent / "runs")] == runs_before
    assert _Attacker.seen == [], _Attacker.seen


def test_behind_an_authenticating_proxy_only_named_operators_launch(store, tmp_path):
    config = tmp_path / "operator.toml"
    config.write_text("[dashboard]\nlaunch = 'operators'\noperators = ['ana@example.org']\n"
                      "proxy_secret_env = 'LAB_PROXY_SECRET'\n")
    secret = "proxy-secret-0123456789abcdef"
    sync_playwright = _require_browser()
    with served(store, "safe-operators", "--server.trustedUserHeaders",
                json.dumps({"X-Forwarded-Email": "email"}),
                env={"ENEM_OPERATOR_CONFIG": str(config), "LAB_PROXY_SECRET": secret}) as port, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        base = f"http://127.0.0.1:{port}"
        try:
            ana = browser.new_page(extra_http_headers={"X-Forwarded-Email": "ana@example.org",
                                                       "X-Forwarded-For": "203.0.113.5",
                                                       PROXY_SECRET_HEADER: secret})
            open_page(ana, f"{base}/Runs", "Model runs")
            assert ana.get_by_role("button", name="Launch", exact=True).count() == 1
            bob = browser.new_page(extra_http_headers={"X-Forwarded-Email": "bob@example.org",
                                                       "X-Forwarded-For": "203.0.113.6",
                                                       PROXY_SECRET_HEADER: secret})
            assert_viewer(bob, base, store, "not_an_operator")
            # A process on this machine naming ana, without the proxy's secret (or a wrong one).
            for forged in ({}, {PROXY_SECRET_HEADER: "guess-" + secret}):
                mallory = browser.new_page(extra_http_headers={
                    "X-Forwarded-Email": "ana@example.org", **forged})
                text = open_page(mallory, f"{base}/Runs", "Model runs")
                assert "shared secret is missing" in text
                assert mallory.get_by_role("button", name="Launch", exact=True).count() == 0
            # Nor is the person at the machine an operator under this policy, operator link or not.
            local = browser.new_page()
            grant_operator_cookie(local, base)
            text = open_page(local, f"{base}/Runs", "Model runs")
            assert "did not come through the authenticating proxy" in text
            assert local.get_by_role("button", name="Launch", exact=True).count() == 0
        finally:
            browser.close()
