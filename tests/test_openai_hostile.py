"""The OpenAI-compatible backend against endpoints that answer badly: no letter in the top-k,
impossible log-probabilities, no key for a remote endpoint, a request timeout to set.

Every endpoint here is a local HTTP server speaking the chat-completions API (no network).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cli import main as cli
from inference.backends import ScoringError
from inference.backends.openai_backend import OpenAIScorer, letters_from_top_logprobs
from tests.db_reading import query_rows
from tests.endpoint_support import pair_key
from tests.test_inference_openai import completion, request
from workflows.runs.folder import read_run_folders

SECRET = "sk-hostile-0123456789abcdef"
LN = math.log
LETTERS_TOP = [("B", LN(0.7)), ("A", LN(0.2)), ("C", LN(0.05))]
NO_LETTER_TOP = [("The", LN(0.6)), ("I", LN(0.2)), ("Resposta", LN(0.1))]


class Endpoint:
    """A scripted chat-completions server: ``reply(prompt)`` gives (top-k pairs, delay s)."""

    def __init__(self):
        self.reply = lambda prompt: (LETTERS_TOP, 0.0)
        self.prompts: list[str] = []
        self.lock = threading.Lock()

    def handler(self):
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][0]["content"]
                with endpoint.lock:
                    endpoint.prompts.append(prompt)
                top, delay = endpoint.reply(prompt)
                time.sleep(delay)
                # json.dumps writes NaN/Infinity as the bare words Python's json.loads reads back.
                data = json.dumps(completion(top)).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout)

        return Handler


@pytest.fixture
def endpoint(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    script = Endpoint()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), script.handler())
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    script.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    pair_key(monkeypatch, tmp_path, script.url)  # the key goes there: its redaction is tested
    yield script
    httpd.shutdown()
    httpd.server_close()


def _run(db, runs_dir, url, *extra) -> list[str]:
    return ["run", "--backend", "openai", "--model", "scripted", "--base-url", url,
            "--year", "2023", "--areas", "MT", "--shuffles", "2", "--db", str(db),
            "--runs-dir", str(runs_dir), "--quiet", *extra]


def _main(argv: list[str]):
    """``enem-llm`` in this process: its exit code, whether returned or raised."""
    try:
        return cli.main(argv)
    except SystemExit as stopped:
        return stopped.code


def _openai_runs(db) -> int:
    return query_rows(db, "SELECT count(*) FROM model_runs WHERE backend = 'openai'")[0][0]


def test_a_run_whose_answers_mostly_carry_no_letter_is_refused(endpoint, demo_db, tmp_path,
                                                               capsys):
    endpoint.reply = lambda prompt: (NO_LETTER_TOP, 0.0)
    code = _main(_run(demo_db, tmp_path / "runs", endpoint.url))
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("error:"), err
    assert "no letter A–E" in err[0]
    for cause in ("does not answer with a letter", "prompt format", "top-k"):
        assert cause in err[0]
    assert _openai_runs(demo_db) == 0, "a run without answers must not be published"
    [folder] = read_run_folders(tmp_path / "runs")
    assert folder.read_json("status.json")["status"] == "failed"

    # A few answers without a letter are blanks of a run that is still published.
    def mostly_letters(prompt):
        rare = hashlib.sha256(prompt.encode()).digest()[0] < 13  # about one prompt in twenty
        return (NO_LETTER_TOP if rare else LETTERS_TOP), 0.0

    endpoint.reply = mostly_letters
    endpoint.prompts.clear()
    assert cli.main(_run(demo_db, tmp_path / "runs2", endpoint.url)) == 0
    expected_blanks = sum(mostly_letters(p)[0] is NO_LETTER_TOP for p in endpoint.prompts)
    assert 0 < expected_blanks < len(endpoint.prompts) / 2
    assert _openai_runs(demo_db) == 1
    blanks = query_rows(demo_db, "SELECT count(*) FROM model_responses r JOIN model_runs m "
                                 "USING (run_id) WHERE m.backend = 'openai' AND r.choice = '.'")
    assert blanks[0][0] == expected_blanks


IMPOSSIBLE = [
    ([("A", 3.4935), ("B", LN(0.1))], "3.49"),  # what stored a letter mass of 32.9
    ([("A", float("nan")), ("B", LN(0.1))], "nan"),
    ([("A", float("inf")), ("B", LN(0.1))], "inf"),
    ([("A", LN(0.9)), ("B", LN(0.8)), ("C", LN(0.7))], "add up to 2.4"),
]


def test_impossible_log_probabilities_are_refused(endpoint):
    for top, what in IMPOSSIBLE:
        with pytest.raises(ScoringError, match="impossible") as caught:
            letters_from_top_logprobs(top)
        assert what in str(caught.value)
        endpoint.reply = lambda prompt, top=top: (top, 0.0)
        endpoint.prompts.clear()
        scorer = OpenAIScorer("scripted", base_url=endpoint.url, backoff_base=0.01)
        with pytest.raises(ScoringError, match="impossible") as caught:
            scorer.score([request("Pimpossible")])
        assert "Pimpossible shuffle 0" in str(caught.value) and what in str(caught.value)
        assert len(endpoint.prompts) == 1, "an impossible answer is not retried"
    # A probability of 1 (log 0), and float rounding just above it, are possible answers.
    for top in ([("A", 0.0)], [("A", 2e-7), ("B", LN(1e-9))], [("A", -0.0), ("B", -30.0)]):
        probs, mass, choice = letters_from_top_logprobs(top)
        assert choice == 0 and probs[0] == pytest.approx(1.0, abs=1e-5)
        assert mass == pytest.approx(1.0, abs=1e-6)


def test_no_key_for_the_openai_api_is_refused_before_any_request(demo_db, tmp_path,
                                                                 monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIScorer("gpt-4o-mini")
    code = _main(["run", "--backend", "openai", "--model", "gpt-4o-mini", "--year", "2023",
                  "--areas", "MT", "--db", str(demo_db), "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("error:") and "OPENAI_API_KEY" in err[0], err
    assert not (tmp_path / "runs").exists(), "refused before a run folder was made"


def test_request_timeout_flag_reaches_the_client(endpoint, demo_db, tmp_path, caplog):
    slow_once = set()

    def first_answer_slow(prompt):
        with endpoint.lock:
            first = not slow_once
            slow_once.add(prompt)
        return LETTERS_TOP, (1.5 if first else 0.0)

    endpoint.reply = first_answer_slow
    with caplog.at_level(logging.WARNING):
        code = _main(_run(demo_db, tmp_path / "runs", endpoint.url,
                          "--request-timeout", "0.25"))
    assert code == 0
    assert "timeout after 0.25s; retrying" in caplog.text
    [folder] = read_run_folders(tmp_path / "runs")
    assert folder.read_json("status.json")["scorer"]["timeout"] == 0.25
    assert SECRET not in caplog.text


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_request_timeout_must_be_a_positive_number(demo_db, tmp_path, capsys, value):
    code = _main(["run", "--backend", "openai", "--model", "m", "--base-url",
                  "http://127.0.0.1:9/v1", "--year", "2023", "--db", str(demo_db),
                  "--request-timeout", value])
    assert code != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "--request-timeout" in err[0], err
