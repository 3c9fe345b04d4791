"""The operator's file: endpoints and the keys they get, the model allow-list, who may operate
the dashboard; and the two guards on what a page shows (no remote images, no paths)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from markdown_it import MarkdownIt

from dashboard.access import (
    Access,
    SessionFacts,
    decide,
    inert_markdown,
    session_facts,
    without_paths,
)
from inference.backends import BackendSettingsError, check_backend
from inference.backends.openai.key import NO_KEY, api_key
from inference.operator_config import (
    OPENAI_API_URL,
    AllowedModel,
    DashboardAccess,
    OperatorConfig,
    OperatorConfigError,
    allowed_models,
    load_operator_config,
    normalized_url,
)
from workflows.report.html import markdown_html

CANARY = "sk-canary-0123456789"


def write_config(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_without_a_file_the_defaults_are_the_safe_ones(tmp_path, monkeypatch):
    monkeypatch.delenv("ENEM_OPERATOR_CONFIG", raising=False)
    monkeypatch.setattr("inference.operator_config.DEFAULT_CONFIG_PATH", tmp_path / "none.toml")
    config = load_operator_config()
    assert config.source is None
    assert config.dashboard == DashboardAccess(launch="local", operators=(),
                                               max_concurrent_runs=1)
    [endpoint] = config.endpoints
    assert (endpoint.base_url, endpoint.key_env) == (OPENAI_API_URL, "OPENAI_API_KEY")
    assert config.models.hub_ids == ()


def test_a_file_is_read_and_relative_folders_are_taken_from_it(tmp_path):
    file = write_config(tmp_path / "operator.toml", """
        [dashboard]
        launch = "operators"
        operators = ["ana@example.org"]
        max_concurrent_runs = 2
        proxy_secret_env = "LAB_PROXY_SECRET"
        [models]
        folder = "models"
        hub_ids = ["org/tiny"]
        [endpoints.vllm]
        base_url = "http://GPU-box:8000/v1/"
        key_env = "VLLM_KEY"
        models = ["llama"]
        [endpoints.open]
        base_url = "http://10.0.0.9/v1"
        """)
    config = load_operator_config(file)
    assert config.dashboard == DashboardAccess("operators", ("ana@example.org",), 2,
                                               "LAB_PROXY_SECRET")
    assert config.models.folder == (tmp_path / "models").resolve()
    assert config.models.hub_ids == ("org/tiny",)
    assert config.endpoint("vllm").models == ("llama",)
    assert config.endpoint_for_url("http://gpu-box:8000/v1").name == "vllm"
    assert config.endpoint_for_url("HTTP://10.0.0.9:80/v1/").name == "open"
    # The OpenAI API is not an endpoint of a file that lists its own.
    assert config.endpoint_for_url(None) is None


@pytest.mark.parametrize("text, words", [
    ("[dashboard]\nlaunch = 'everyone'", "launch must be one of"),
    ("[dashboard]\nmax_concurrent_runs = 0", "max_concurrent_runs"),
    ("[dashboard]\noperators = 'ana'", "operators must be a list"),
    # Without a secret shared with the proxy, any local process could claim an identity.
    ("[dashboard]\nlaunch = 'operators'\noperators = ['ana']", "needs proxy_secret_env"),
    ("[dashboard]\nproxy_secret_env = ''", "proxy_secret_env must name"),
    ("[endpoints.x]\nbase_url = 'file:///etc/passwd'", "base_url must be an http(s) URL"),
    ("[endpoints.x]\nbase_url = 'http://a/v1'\nkey = 'sk-1'", "unknown key(s) key"),
    ("[servers]\nx = 1", "unknown table(s) servers"),
    ("[dashboard\n", "operator.toml"),
])
def test_a_bad_file_is_refused_with_the_setting_named(tmp_path, text, words):
    file = write_config(tmp_path / "operator.toml", text)
    with pytest.raises(OperatorConfigError, match=r".*") as refused:
        load_operator_config(file)
    assert words in str(refused.value) and str(file) in str(refused.value)


def test_a_file_named_in_the_environment_must_exist(tmp_path, monkeypatch):
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(OperatorConfigError, match="no operator configuration file"):
        load_operator_config()


def test_urls_compare_as_endpoints():
    assert normalized_url("HTTPS://API.openai.com:443/v1/") == "https://api.openai.com/v1"
    assert normalized_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert normalized_url("http://box:8080/v1") != normalized_url("http://box:8081/v1")


def test_the_key_goes_only_to_the_endpoint_configured_for_it(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("VLLM_KEY", "sk-vllm-key-42")
    defaults = OperatorConfig()
    assert api_key(None, defaults) == CANARY
    assert api_key("https://api.openai.com/v1/", defaults) == CANARY
    for elsewhere in ("http://attacker.example/v1", "http://127.0.0.1:9/v1",
                      "https://api.openai.com.attacker.example/v1", "not a url"):
        assert api_key(elsewhere, defaults) == NO_KEY
    config = load_operator_config(write_config(tmp_path / "operator.toml", """
        [endpoints.vllm]
        base_url = "http://127.0.0.1:8000/v1"
        key_env = "VLLM_KEY"
        [endpoints.nokey]
        base_url = "http://127.0.0.1:8001/v1"
        """))
    assert api_key("http://127.0.0.1:8000/v1", config) == "sk-vllm-key-42"
    assert api_key("http://127.0.0.1:8001/v1", config) == NO_KEY
    assert api_key(None, config) == NO_KEY  # the OpenAI API is not listed in this file
    monkeypatch.delenv("VLLM_KEY")
    with pytest.raises(BackendSettingsError, match="set VLLM_KEY"):
        api_key("http://127.0.0.1:8000/v1", config)


class _HeaderLog(BaseHTTPRequestHandler):
    """Records every request's Authorization header and answers 401."""

    seen: ClassVar[list[str]] = []

    def do_POST(self):
        self.seen.append(self.headers.get("Authorization", ""))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": {"message": "no"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, *args):
        pass


def test_a_real_request_to_an_unconfigured_url_carries_no_key(tmp_path, monkeypatch):
    """The OpenAI client itself, pointed at a local header-logging server: without an entry
    pairing the URL with a variable it never sees the canary; with one, it does."""
    from inference.backends.openai.scorer import OpenAIScorer

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(tmp_path / "operator.toml"))
    write_config(tmp_path / "operator.toml", "[dashboard]\nlaunch = 'local'\n")
    _HeaderLog.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _HeaderLog)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        scorer = OpenAIScorer("m", base_url=url, timeout=2, max_attempts=1)
        with pytest.raises(Exception):  # noqa: B017 - the 401 ends it; what was sent matters
            scorer._call("prompt")
        write_config(tmp_path / "operator.toml",
                     f"[endpoints.mine]\nbase_url = '{url}'\nkey_env = 'OPENAI_API_KEY'\n")
        paired = OpenAIScorer("m", base_url=url, timeout=2, max_attempts=1)
        with pytest.raises(Exception):  # noqa: B017
            paired._call("prompt")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert len(_HeaderLog.seen) == 2
    assert CANARY not in _HeaderLog.seen[0] and _HeaderLog.seen[0] == f"Bearer {NO_KEY}"
    assert _HeaderLog.seen[1] == f"Bearer {CANARY}"


def test_the_preflight_refuses_a_configured_endpoint_without_its_key(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(tmp_path / "operator.toml"))
    write_config(tmp_path / "operator.toml", "[dashboard]\n")
    with pytest.raises(BackendSettingsError, match="set OPENAI_API_KEY"):
        check_backend("openai", {})
    check_backend("openai", {"base_url": "http://10.1.2.3:8000/v1"})  # no key needed there


def test_the_model_allow_list_is_the_folder_and_the_hub_ids(tmp_path):
    from inference.operator_config import ModelAllowList

    folder = tmp_path / "models"
    (folder / "tiny").mkdir(parents=True)
    (folder / "tiny" / "config.json").write_text("{}")
    (folder / "quant").mkdir()
    (folder / "quant" / "q4.gguf").write_bytes(b"GGUF")
    (folder / "quant" / "notes.txt").write_text("x")
    (folder / "loose.gguf").write_bytes(b"GGUF")
    (folder / "empty").mkdir()
    (tmp_path / "outside.gguf").write_bytes(b"GGUF")
    listed = allowed_models(ModelAllowList(folder=folder, hub_ids=("org/tiny",)))
    assert listed == [
        AllowedModel("loose.gguf", str(folder), "loose.gguf"),
        AllowedModel("quant/q4.gguf", str(folder / "quant"), "q4.gguf"),
        AllowedModel("tiny", str(folder / "tiny")),
        AllowedModel("org/tiny", "org/tiny"),
    ]
    assert allowed_models(ModelAllowList(folder=tmp_path / "nowhere")) == []


LOCAL = SessionFacts(server_address="127.0.0.1", host="localhost:8501",
                     origin="http://localhost:8501", client_ip=None, forwarded=False,
                     identity=None, trusted_header=False, proof=True)


@pytest.mark.parametrize("change, may", [
    ({}, True),
    ({"proof": False}, False),                    # no operator link opened: headers never promote
    ({"host": "127.0.0.1:8501", "origin": "http://127.0.0.1:8501"}, True),
    ({"host": "[::1]:8501", "origin": None}, True),
    ({"server_address": None}, False),            # listening on every interface
    ({"server_address": "0.0.0.0"}, False),
    ({"host": "evil.example:8501"}, False),      # a rebinding page's Host
    ({"origin": "http://evil.example:8501"}, False),
    ({"forwarded": True}, False),                 # a reverse proxy in front
    ({"client_ip": "192.0.2.7"}, False),
    ({"host": None}, False),
])
def test_only_the_browser_with_the_operator_link_operates_by_default(change, may):
    facts = SessionFacts(**{**LOCAL.__dict__, **change})
    assert decide(facts, DashboardAccess()).may_operate is may


def test_operators_are_named_by_the_proxy_and_believed_only_behind_it():
    policy = DashboardAccess(launch="operators", operators=("ana@example.org",))
    proxied = SessionFacts(server_address="127.0.0.1", host="enem.example.org",
                           origin="https://enem.example.org", client_ip=None, forwarded=True,
                           identity="ana@example.org", trusted_header=True, proof=True)
    assert decide(proxied, policy) == Access(True)
    # A local process naming ana in the header, without the proxy's secret.
    forged = SessionFacts(**{**proxied.__dict__, "proof": False})
    assert "secret" in decide(forged, policy).why and not decide(forged, policy).may_operate
    other = SessionFacts(**{**proxied.__dict__, "identity": "bob@example.org"})
    assert not decide(other, policy).may_operate
    exposed = SessionFacts(**{**proxied.__dict__, "server_address": "0.0.0.0"})
    assert "loopback" in decide(exposed, policy).why and not decide(exposed, policy).may_operate
    no_header = SessionFacts(**{**proxied.__dict__, "trusted_header": False})
    assert not decide(no_header, policy).may_operate
    # The local person is no operator under this policy, and nobody is under "never".
    assert not decide(LOCAL, policy).may_operate
    assert not decide(LOCAL, DashboardAccess(launch="never")).may_operate


def test_session_facts_read_headers_in_any_case():
    facts = session_facts({"Host": "localhost:1", "ORIGIN": "http://localhost:1",
                           "X-Forwarded-For": "203.0.113.9"}, "127.0.0.1", None,
                          {"email": "ana@example.org"}, trusted_header=True, proof=False)
    assert (facts.host, facts.origin, facts.forwarded, facts.identity) == (
        "localhost:1", "http://localhost:1", True, "ana@example.org")


def test_imported_texts_fetch_nothing_on_a_page_or_in_a_report():
    stem = "See ![chart](http://198.51.100.1/p.png) and ![ref][r]\n\n[r]: http://198.51.100.1/q"
    rendered = MarkdownIt("commonmark").render(inert_markdown(stem))
    assert "<img" not in rendered and "![chart](http://198.51.100.1/p.png)" in rendered
    assert "<img" not in markdown_html("![x](http://198.51.100.1/p.png) <img src='y'>")


def test_a_viewer_reads_messages_without_the_servers_folders():
    assert without_paths("OSError: /srv/models/llama/model.gguf not found; see /etc/shadow") \
        == "OSError: model.gguf not found; see shadow"
    assert without_paths("see https://example.org/a/b and ./rel/x") \
        == "see https://example.org/a/b and ./rel/x"
