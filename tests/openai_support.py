"""Local servers speaking the OpenAI API (no network), and what the tests of the
OpenAI-compatible backend share.

- :func:`completion`, a chat.completion body shaped like the real API's from a top-k, and
  :func:`request`, a one-item score request whose prompt carries a marker.
- The ``chat_endpoint`` fixture (:class:`ScriptedChatEndpoint`): chat completions answering each
  prompt with the top-k and after the delay its ``reply(prompt)`` gives (by default
  :data:`LETTERS_TOP` at once; :data:`NO_LETTER_TOP` holds no letter), recording the prompts;
  its key :data:`SECRET` is paired with it, as an operator would. :func:`openai_run_args`,
  :func:`cli_exit_code` and :func:`count_openai_runs` run ``enem-llm run`` against it and count
  the published runs.
- The ``openai_server`` fixture (:class:`FakeOpenAIServer`): chat completions (a letter top-k,
  :func:`letter_top`, or a reply sampled from :data:`REPLIES` by the request's seed) and
  completions echoing the prompt's log-probabilities (:func:`echo_choice`, over the fake
  model's :func:`fake_tokens` and :func:`fake_logprob`), recording every body it got.
  :func:`question_requests` builds score requests of made-up questions and
  :func:`fake_scorer` the backend's scorer of an answer method against it.

tests/conftest.py registers this module as a plugin, so every fixture here is there for any
test that names it (no import).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from cli import main as cli
from inference.backends import ScoreRequest, make_scorer
from inference.prompts import build_request
from inference.questions import Question
from inference.shuffles import option_permutations
from tests.db_support import query_rows
from tests.endpoint_support import pair_key


def completion(top: list[tuple[str, float]]) -> dict:
    """A chat.completion body with logprobs, shaped like the real API's."""
    entries = [
        {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top
    ]
    return {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "scripted",
        "choices": [{
            "index": 0, "finish_reason": "length",
            "message": {"role": "assistant", "content": top[0][0]},
            "logprobs": {"content": [{**entries[0], "top_logprobs": entries}]},
        }],
        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
    }


def request(marker: str, n: int = 1) -> ScoreRequest:
    return ScoreRequest(key=marker, prefix="Instructions\n\n",
                        stem=f"Question: {marker}\nOptions:\n",
                        option_blocks=tuple(f"(A) x{i}\n(B) y\n" for i in range(n)),
                        suffix="Answer: (")


# ------------------------------------------------ a scripted chat endpoint (chat_endpoint)

SECRET = "sk-hostile-0123456789abcdef"
LN = math.log
LETTERS_TOP = [("B", LN(0.7)), ("A", LN(0.2)), ("C", LN(0.05))]
NO_LETTER_TOP = [("The", LN(0.6)), ("I", LN(0.2)), ("Resposta", LN(0.1))]


class ScriptedChatEndpoint:
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


def send_json(handler: BaseHTTPRequestHandler, status: int, reply: dict) -> None:
    """Answer the request ``handler`` serves with ``reply`` as JSON and ``status``."""
    data = json.dumps(reply).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


@contextmanager
def local_api(handler) -> Iterator[str]:
    """A threaded HTTP server on a free loopback port answering with ``handler``; yields the
    base URL an OpenAI client takes (``…/v1``) and shuts the server down after."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def chat_endpoint(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    script = ScriptedChatEndpoint()
    with local_api(script.handler()) as script.url:
        pair_key(monkeypatch, tmp_path, script.url)  # the key goes there: its redaction is tested
        yield script


def openai_run_args(db, runs_dir, url, *extra) -> list[str]:
    return ["run", "--backend", "openai", "--model", "scripted", "--base-url", url,
            "--year", "2023", "--areas", "MT", "--shuffles", "2", "--db", str(db),
            "--runs-dir", str(runs_dir), "--quiet", *extra]


def cli_exit_code(argv: list[str]):
    """``enem-llm`` in this process: its exit code, whether returned or raised."""
    try:
        return cli.main(argv)
    except SystemExit as stopped:
        return stopped.code


def count_openai_runs(db) -> int:
    return query_rows(db, "SELECT count(*) FROM model_runs WHERE backend = 'openai'")[0][0]


# ------------------------ chat and completions with prompt log-probabilities (openai_server)

LETTERS = "ABCDE"
#: The fake model's tokenizer: a parenthesis merges with the letter after it ("(B"), so a
#: continuation "B) …" after a prompt ending in "(" crosses the token boundary.
TOKEN = re.compile(r"\([A-E]|\w+|\s|[^\w\s]")
#: Replies of the fake chat model (picked by the request's seed) and the letter each answers,
#: read by eye; None: no letter a reader could claim.
REPLIES = (("B) Dióxido de carbono", 1), ("A resposta correta é a C.", 2), ("Resposta: (D)", 3),
           ("Acho que (E) está certa", 4), ("The answer is A", 0), ("Não sei responder.", None),
           ("", None), ("a b c d", None), ("C", 2))


def fake_tokens(text: str) -> list[str]:
    return TOKEN.findall(text)


def fake_logprob(previous: str, token: str) -> float:
    """The fake model's log-probability of ``token`` after ``previous``: in (-4.05, -0.05]."""
    digest = int(hashlib.sha256(f"{previous}|{token}".encode()).hexdigest()[:8], 16)
    return -0.05 - (digest % 4000) / 1000


def letter_top(prompt: str) -> list[tuple[str, float]]:
    """A top-k holding all five letters, different for every prompt, plus a word."""
    digest = hashlib.sha256(prompt.encode()).digest()
    weights = np.array([1 + digest[i] for i in range(5)], dtype=float)
    probs = 0.9 * weights / weights.sum()
    return [(LETTERS[i], math.log(p)) for i, p in enumerate(probs)] + [("The", math.log(0.1))]


def echo_choice(index: int, text: str) -> dict:
    tokens = fake_tokens(text)
    offsets = np.cumsum([0] + [len(t) for t in tokens[:-1]]).tolist()
    values = [None] + [fake_logprob(a, b) for a, b in itertools.pairwise(tokens)]
    return {"index": index, "text": text, "finish_reason": "length",
            "logprobs": {"tokens": tokens, "token_logprobs": values, "text_offset": offsets,
                         "top_logprobs": [None] + [
                             {t: v} for t, v in zip(tokens[1:], values[1:], strict=True)]}}


class FakeOpenAIServer:
    """Chat completions (letter top-k or a sampled reply) and completions with echoed prompt
    log-probabilities; ``echo`` is 'ok', 'refused' (HTTP 400) or 'null' (no logprobs)."""

    def __init__(self):
        self.echo = "ok"
        #: The sampled replies, by the request's seed (a third of REPLIES match no letter).
        self.replies = REPLIES
        self.bodies: list[tuple[str, dict]] = []
        self.lock = threading.Lock()

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        with self.lock:
            self.bodies.append((path, body))
        if path.endswith("/chat/completions"):
            prompt = body["messages"][0]["content"]
            if body.get("logprobs"):
                top = [{"token": t, "logprob": lp} for t, lp in letter_top(prompt)]
                content = [{**top[0], "top_logprobs": top}]
                return 200, {"choices": [{"index": 0, "message": {"role": "assistant",
                                                                   "content": "A"},
                                          "logprobs": {"content": content}}]}
            text = self.replies[body["seed"] % len(self.replies)][0]
            return 200, {"choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": text or None}}]}
        if self.echo == "refused":
            return 400, {"error": {"message": "echo is not supported with max_tokens=0"}}
        choices = [echo_choice(i, text) for i, text in enumerate(body["prompt"])]
        if self.echo == "null":
            for choice in choices:
                choice["logprobs"] = None
        return 200, {"object": "text_completion", "choices": choices}

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, reply = server.answer(self.path, body)
                send_json(self, status, reply)

        return Handler


@pytest.fixture
def openai_server(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs no key
    fake = FakeOpenAIServer()
    with local_api(fake.handler()) as fake.url:
        yield fake


def question_requests(n_items: int = 2, n_shuffles: int = 4, seed: int = 5):
    options = ("Oxigênio", " Dióxido de carbono ", "Nitrogênio", "Hélio e neônio", "(C) hidrogênio")
    items = [Question(year=2022, area="CN", language="pt", stem=f"Item {i}: qual gás as "
                      "plantas absorvem?", options=options, key=LETTERS[i % 5], annulled=False,
                      item_id=2022000 + i, source="test") for i in range(n_items)]
    return [build_request(it, [], option_permutations(n_shuffles, 0, it.uid), seed=seed)
            for it in items]


def fake_scorer(server, method: str, **options):
    return make_scorer("openai", model="fake", base_url=server.url, answer_method=method,
                       backoff_base=0.01, backoff_max=0.02, **options)
