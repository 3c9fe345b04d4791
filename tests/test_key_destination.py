"""Where the OpenAI backend's key goes (issue 40, point 2): never to the URL in
``$OPENAI_BASE_URL``, which the OpenAI client reads when it is given no URL.

Two local servers speak the chat-completions API and record every request's headers: a
*canary* named by ``$OPENAI_BASE_URL``, and a stand-in for the OpenAI API (the project's
``OPENAI_API_URL`` pointed at it, so nothing leaves the machine). A run without ``--base-url``
must go to the OpenAI API with its key and send the canary nothing at all.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.openai_support import LETTERS_TOP, cli_exit_code, completion, count_openai_runs

SECRET = "sk-official-key-0123456789"
CUSTOM_SECRET = "sk-custom-header-0123456789"


class RecordingEndpoint:
    """Chat completions answering every prompt with a letter top-k; ``headers`` holds each
    request's headers (lower-case names)."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.url = ""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with endpoint.lock:
                    endpoint.headers.append({k.lower(): v for k, v in self.headers.items()})
                data = json.dumps(completion(LETTERS_TOP)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@pytest.fixture
def endpoints(monkeypatch):
    """(the canary, the OpenAI API's stand-in), with $OPENAI_BASE_URL naming the canary and
    $OPENAI_API_KEY holding the key."""
    servers, made = [], []
    for _ in range(2):
        endpoint = RecordingEndpoint()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), endpoint.handler())
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        endpoint.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        servers.append(httpd)
        made.append(endpoint)
    canary, official = made
    monkeypatch.setattr("inference.operator_config.OPENAI_API_URL", official.url)
    monkeypatch.setenv("OPENAI_BASE_URL", canary.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    yield canary, official
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


#: The operator's file: none with [endpoints] (the default pairs the OpenAI API with
#: OPENAI_API_KEY), or one naming the OpenAI API's stand-in itself.
CONFIGS = {"default": "[dashboard]\n",
           "listed": "[endpoints.openai]\nbase_url = '{official}'\nkey_env = 'OPENAI_API_KEY'\n"}


@pytest.fixture(params=sorted(CONFIGS))
def operator_file(request, endpoints, tmp_path, monkeypatch):
    canary, official = endpoints
    config = tmp_path / "operator.toml"
    config.write_text(CONFIGS[request.param].format(official=official.url), encoding="utf-8")
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(config))
    return canary, official


def _only_to_the_api(canary: RecordingEndpoint, official: RecordingEndpoint) -> None:
    assert canary.headers == [], (
        f"$OPENAI_BASE_URL got {len(canary.headers)} request(s), authorizations "
        f"{sorted({h.get('authorization') for h in canary.headers})}")
    assert official.headers, "the run asked the OpenAI API nothing"
    assert {h.get("authorization") for h in official.headers} == {f"Bearer {SECRET}"}


def test_a_run_without_a_url_goes_to_the_openai_api_not_openai_base_url(operator_file, demo_db,
                                                                       tmp_path, caplog):
    canary, official = operator_file
    code = cli_exit_code(["run", "--backend", "openai", "--model", "m", "--year", "2023",
                          "--areas", "MT", "--shuffles", "1", "--db", str(demo_db),
                          "--runs-dir", str(tmp_path / "runs"), "--quiet"])
    assert code == 0
    _only_to_the_api(canary, official)
    assert count_openai_runs(demo_db) == 1
    assert "OPENAI_BASE_URL is not used" in caplog.text


def test_a_live_cat_without_a_url_goes_to_the_openai_api_not_openai_base_url(operator_file,
                                                                            demo_db, tmp_path):
    """``cat-run`` without --base-url: what a Live CAT launched from the dashboard runs."""
    canary, official = operator_file
    code = cli_exit_code(["cat-run", "--backend", "openai", "--model", "m", "--year", "2023",
                          "--areas", "MT", "--max-items", "3", "--db", str(demo_db),
                          "--runs-dir", str(tmp_path / "runs"), "--quiet"])
    assert code == 0
    _only_to_the_api(canary, official)


def test_a_url_given_gets_the_requests_and_never_the_key(endpoints, demo_db, tmp_path,
                                                         monkeypatch):
    """--base-url naming the canary: it is asked, with the placeholder; and the headers the
    OpenAI client takes from the environment (one may carry a credential) go only where the
    key goes."""
    canary, official = endpoints
    config = tmp_path / "operator.toml"
    config.write_text("[dashboard]\n", encoding="utf-8")
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(config))
    monkeypatch.setenv("OPENAI_CUSTOM_HEADERS",
                       f"Authorization: Bearer {CUSTOM_SECRET}\nX-Team-Token: {CUSTOM_SECRET}")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-canary")
    for backend_words in (["run", "--shuffles", "1"], ["cat-run", "--max-items", "2"]):
        code = cli_exit_code([backend_words[0], "--backend", "openai", "--model", "m",
                              "--base-url", canary.url, "--year", "2023", "--areas", "MT",
                              *backend_words[1:], "--db", str(demo_db),
                              "--runs-dir", str(tmp_path / backend_words[0]), "--quiet"])
        assert code == 0
    assert canary.headers and official.headers == []
    assert {h.get("authorization") for h in canary.headers} == {"Bearer sk-no-key-sent"}
    for headers in canary.headers:
        assert not {"x-team-token", "openai-organization"} & set(headers), headers
        assert SECRET not in str(headers) and CUSTOM_SECRET not in str(headers)

    # The OpenAI API (paired with its key) gets the account's headers with the key.
    code = cli_exit_code(["run", "--backend", "openai", "--model", "m", "--year", "2023",
                          "--areas", "MT", "--shuffles", "1", "--seed", "1",
                          "--db", str(demo_db), "--runs-dir", str(tmp_path / "api"), "--quiet"])
    assert code == 0
    assert {h.get("authorization") for h in official.headers} == {f"Bearer {SECRET}"}
    assert {h.get("x-team-token") for h in official.headers} == {CUSTOM_SECRET}
    assert {h.get("openai-organization") for h in official.headers} == {"org-canary"}
