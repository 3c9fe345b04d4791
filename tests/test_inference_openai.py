"""The OpenAI-compatible backend against a local scripted HTTP server speaking the chat API."""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from inference.backends import NO_CHOICE, ScoreRequest, ScoringError, make_scorer
from inference.backends.openai.scorer import (
    MalformedResponseError,
    OpenAIScorer,
    letter_of_token,
    letters_from_top_logprobs,
)
from tests.endpoint_support import pair_key
from tests.openai_support import completion, request

SECRET = "sk-test-SECRET-0123456789abcdef"
LN = math.log


FIXED_TOP = [("A", LN(0.6)), (" A", LN(0.1)), ("B", LN(0.2)), ("(C", LN(0.05)), ("The", LN(0.01))]


class Script:
    """Per-prompt queues of behaviours; the last behaviour repeats. Records every request."""

    def __init__(self):
        self.behaviours: dict[str, list[str]] = {}
        self.requests: list[dict] = []
        self.counts: dict[str, int] = defaultdict(int)
        self.lock = threading.Lock()

    def next(self, prompt: str) -> str:
        for marker, queue in self.behaviours.items():
            if marker in prompt:
                with self.lock:
                    n = self.counts[marker]
                    self.counts[marker] += 1
                return queue[min(n, len(queue) - 1)]
        return "ok"


def make_handler(script: Script):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output quiet
            pass

        def _send(self, status: int, body: str, ctype="application/json", headers=None):
            data = body.encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = body["messages"][0]["content"]
            with script.lock:
                script.requests.append(
                    {"path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
            action = script.next(prompt)
            if action == "429":
                self._send(429, json.dumps({"error": {"message": "slow down"}}),
                           headers={"Retry-After": "0"})
            elif action == "500":
                self._send(500, json.dumps({"error": {"message": "boom"}}))
            elif action == "401-echo":  # a server that echoes the credentials back
                echoed = f"bad key {self.headers['Authorization']}"
                self._send(401, json.dumps({"error": {"message": echoed}}))
            elif action == "slow":
                time.sleep(1.0)
                self._send(200, json.dumps(completion(FIXED_TOP)))
            elif action == "no-choices":
                self._send(200, json.dumps({"id": "x", "object": "chat.completion", "choices": []}))
            elif action == "no-logprobs":
                body = completion(FIXED_TOP)
                body["choices"][0]["logprobs"] = None
                self._send(200, json.dumps(body))
            elif action == "not-json":
                self._send(200, "<html>gateway hiccup</html>", ctype="text/html")
            elif action == "no-letters":
                self._send(200, json.dumps(completion([("The", LN(0.5)), ("I", LN(0.3))])))
            else:
                match = re.search(r"\(A\) s(\d+)", prompt)
                if match:  # favour the letter given by the shuffle number
                    favoured = "ABCDE"[int(match.group(1)) % 5]
                    top = [(favoured, LN(0.9))] + [
                        (L, LN(0.02)) for L in "ABCDE" if L != favoured
                    ]
                else:
                    top = FIXED_TOP
                self._send(200, json.dumps(completion(top)))

    return Handler


@pytest.fixture
def server():
    script = Script()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    script.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    yield script
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def scorer(server, monkeypatch, tmp_path) -> OpenAIScorer:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pair_key(monkeypatch, tmp_path, server.url)  # the key goes there: its redaction is tested
    return make_scorer(
        "openai", model="scripted", base_url=server.url, timeout=0.4, max_attempts=4,
        malformed_attempts=3, backoff_base=0.01, backoff_max=0.05, concurrency=4,
    )


def expected_fixed() -> np.ndarray:
    raw = np.array([0.7, 0.2, 0.05, 1e-6, 1e-6])
    return raw / raw.sum()


def test_token_mapping_and_floor_rule():
    tokens = ("A", " B", "(C", "(D)", "E)", " (A", "a", "AB", "The")
    assert [letter_of_token(t) for t in tokens] == [
        0, 1, 2, 3, 4, 0, None, None, None
    ]
    probs, mass, choice = letters_from_top_logprobs(FIXED_TOP)
    np.testing.assert_allclose(probs, expected_fixed(), rtol=1e-12)
    assert mass == pytest.approx(0.95) and choice == 0
    # when the smallest top-k probability is below the floor, the floor drops to it
    probs, _, _ = letters_from_top_logprobs([("B", LN(0.9)), ("x", LN(1e-9))], floor=1e-6)
    np.testing.assert_allclose(probs, np.array([1e-9, 0.9, 1e-9, 1e-9, 1e-9]) / (0.9 + 4e-9))


def test_scores_retries_and_auth(server, scorer, caplog):
    server.behaviours = {
        "P429": ["429", "429", "ok"],
        "P500": ["500", "ok"],
        "Pslow": ["slow", "ok"],
        "Pbad": ["no-choices", "not-json", "ok"],
    }
    with caplog.at_level(logging.DEBUG):
        results = scorer.score([request("P429"), request("P500"), request("Pslow"),
                                request("Pbad"), request("Pplain")])
    assert [r.key for r in results] == ["P429", "P500", "Pslow", "Pbad", "Pplain"]
    for r in results:
        np.testing.assert_allclose(r.probs[0], expected_fixed(), rtol=1e-9)
        assert r.letter_mass[0] == pytest.approx(0.95) and r.choice[0] == 0
    assert dict(server.counts) == {"P429": 3, "P500": 2, "Pslow": 2, "Pbad": 3}
    assert len(server.requests) == 3 + 2 + 2 + 3 + 1
    first = next(r for r in server.requests if "P429" in r["body"]["messages"][0]["content"])
    assert first["path"] == "/v1/chat/completions"
    assert first["auth"] == f"Bearer {SECRET}"
    body = first["body"]
    assert body["max_tokens"] == 1 and body["temperature"] == 0 and body["logprobs"] is True
    assert body["top_logprobs"] == 20 and body["model"] == "scripted"
    assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
    assert body["messages"][0]["content"] == request("P429").prompt(0)
    assert "retrying" in caplog.text and "timeout" in caplog.text
    assert SECRET not in caplog.text
    assert SECRET not in repr(scorer) and SECRET not in json.dumps(scorer.describe())


def test_shuffles_in_order_with_concurrency(server, scorer):
    req = ScoreRequest(key="order", prefix="I\n\n", stem="Q\n",
                       option_blocks=tuple(f"(A) s{s}\n" for s in range(12)), suffix="Answer: (")
    (result,) = scorer.score([req])
    assert result.choice.tolist() == [s % 5 for s in range(12)]
    assert np.allclose(result.letter_mass, 0.98)


def test_failures_are_bounded_and_never_leak_the_key(server, scorer, caplog):
    server.behaviours = {
        "Pdown": ["500"],
        "Pgarbage": ["no-logprobs"],
        "Pauth": ["401-echo"],
        "Pnone": ["no-letters"],
    }
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(ScoringError, match="Pdown shuffle 0: giving up after 4 attempts") as e1:
            scorer.score([request("Pdown")])
        with pytest.raises(MalformedResponseError, match="Pgarbage shuffle 0: malformed") as e2:
            scorer.score([request("Pgarbage")])
        with pytest.raises(ScoringError, match="HTTP 401") as e3:
            scorer.score([request("Pauth")])
    assert server.counts["Pdown"] == 4 and server.counts["Pgarbage"] == 3
    assert server.counts["Pauth"] == 1  # not retried
    for info in (e1, e2, e3):
        assert SECRET not in str(info.value) and SECRET not in repr(info.value)
        assert info.value.__cause__ is None
    assert "***" in str(e3.value)  # the echoed key was redacted
    assert SECRET not in caplog.text
    (none,) = scorer.score([request("Pnone")])
    assert none.choice[0] == NO_CHOICE and none.letter_mass[0] == 0
    np.testing.assert_allclose(none.probs[0], 0.2)


def test_key_handling_without_environment(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="set OPENAI_API_KEY"):
        OpenAIScorer("gpt-4o-mini")
    local = OpenAIScorer("scripted", base_url=server.url, token_limit_param="max_completion_tokens")
    local.score([request("Plocal")])
    assert server.requests[-1]["auth"].startswith("Bearer ")
    assert server.requests[-1]["body"]["max_completion_tokens"] == 1
    assert "max_tokens" not in server.requests[-1]["body"]
