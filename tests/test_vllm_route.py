"""The route for bigger runs: a model served by an OpenAI-compatible engine (vLLM, SGLang) and
the openai backend pointed at it (docs/answer_methods.md, "Bigger runs on an existing engine").

The local server here answers as vLLM's ``/v1/chat/completions`` does (vLLM's OpenAI server,
``vllm/entrypoints/openai/protocol.py``: ``ChatCompletionResponse`` with
``ChatCompletionLogProbs`` → ``content`` → ``top_logprobs``, each entry ``token``, ``logprob``
and ``bytes``, plus ``stop_reason`` and ``prompt_logprobs`` beside the usual fields), and
refuses what vLLM refuses: ``top_logprobs`` above the server's ``--max-logprobs`` (20 by
default) or without ``logprobs: true``. It records the requests and how many were open at
once, so the test checks the one request the letter-prob method sends per prompt and the
concurrency the backend keeps.
"""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest

from cli.main import main
from inference.backends import make_scorer
from tests.db_support import query_rows
from tests.openai_support import local_api, request, send_json

#: vLLM's default ``--max-logprobs``.
MAX_LOGPROBS = 20
#: The engine's next-token distribution for every prompt: letters with and without a leading
#: space (a Llama tokenizer's "▁A" is decoded " A"), and other tokens.
TOP = [(" B", 0.55), ("B", 0.15), (" A", 0.12), ("A", 0.03), (" C", 0.05), (" The", 0.04),
       (" D", 0.02), ("E", 0.01), ("\n", 0.005)]


class VLLMLikeServer:
    """vLLM's chat-completions answers and refusals; records bodies and peak concurrency."""

    def __init__(self, delay: float = 0.05):
        self.delay = delay
        self.bodies: list[dict] = []
        self.open = self.peak = 0
        self.lock = threading.Lock()
        self.url = ""

    def answer(self, body: dict) -> tuple[int, dict]:
        top = body.get("top_logprobs")
        if top is not None and not body.get("logprobs"):
            return 400, _error("when using `top_logprobs`, `logprobs` must be set to true.")
        if top is not None and top > MAX_LOGPROBS:
            return 400, _error(f"Requested sample logprobs of {top}, which is greater than max "
                               f"allowed: {MAX_LOGPROBS}")
        entries = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
                   for t, p in TOP[: top or 0]]
        return 200, {
            "id": "chatcmpl-8c2f0e", "object": "chat.completion", "created": 1,
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": TOP[0][0],
                                                 "tool_calls": [], "reasoning_content": None},
                         "logprobs": {"content": [{**entries[0], "top_logprobs": entries}]}
                         if entries else None,
                         "finish_reason": "length", "stop_reason": None}],
            "usage": {"prompt_tokens": 31, "total_tokens": 32, "completion_tokens": 1,
                      "prompt_tokens_details": None},
            "prompt_logprobs": None, "kv_transfer_params": None,
        }

    def handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies.append(body)
                    server.open += 1
                    server.peak = max(server.peak, server.open)
                try:
                    time.sleep(server.delay)  # the engine's work, so requests overlap
                    status, reply = server.answer(body)
                finally:
                    with server.lock:
                        server.open -= 1
                send_json(self, status, reply)

            def log_message(self, *args):
                pass

        return Handler


def _error(message: str) -> dict:
    return {"object": "error", "message": message, "type": "BadRequestError", "param": None,
            "code": 400}


@pytest.fixture
def vllm(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local engine needs no key
    server = VLLMLikeServer()
    with local_api(server.handler()) as server.url:
        yield server


def test_letter_prob_sends_one_top_k_request_per_prompt_and_reads_the_letters(vllm):
    scorer = make_scorer("openai", model="meta-llama/Llama-2-70b-chat-hf", base_url=vllm.url,
                         concurrency=3, backoff_base=0.01, backoff_max=0.02)
    result = scorer.score([request(f"q{i}", n=4) for i in range(3)])
    assert len(vllm.bodies) == 12  # 3 questions × 4 shuffles, one request each
    for body in vllm.bodies:
        assert body["model"] == "meta-llama/Llama-2-70b-chat-hf"
        assert body["max_tokens"] == 1 and body["logprobs"] is True
        assert body["top_logprobs"] == MAX_LOGPROBS  # what vLLM allows by default
        assert body["temperature"] == 0.0
        assert [m["role"] for m in body["messages"]][-1] == "user"
    # Each letter's mass is its tokens' (with and without the space), renormalised over A–E.
    mass = {"A": 0.12 + 0.03, "B": 0.55 + 0.15, "C": 0.05, "D": 0.02, "E": 0.01}
    expected = np.array([mass[x] for x in "ABCDE"]) / sum(mass.values())
    assert [item.key for item in result] == ["q0", "q1", "q2"]
    probs = np.stack([item.probs for item in result])
    assert probs.shape == (3, 4, 5)
    np.testing.assert_allclose(probs, np.broadcast_to(expected, probs.shape), rtol=1e-6)
    # The letters' share of the next-token mass is kept (0.93 here: " The" and "\n" are not
    # letters).
    np.testing.assert_allclose(np.stack([item.letter_mass for item in result]), sum(mass.values()),
                               rtol=1e-6)
    assert 1 < vllm.peak <= 3  # the backend's concurrency, never more


def test_an_engine_with_fewer_logprobs_says_what_to_start_it_with(vllm):
    """Asking for more top logprobs than the engine was started with: the run fails with the
    engine's own message, not silently with fewer letters."""
    scorer = make_scorer("openai", model="m", base_url=vllm.url, top_logprobs=25,
                         backoff_base=0.01, backoff_max=0.02)
    with pytest.raises(Exception, match="max allowed: 20"):
        scorer.score([request("q")])


def test_the_run_command_takes_the_engines_concurrency(vllm, demo_db, tmp_path):
    """``enem-llm run --backend openai --concurrency 6`` against the engine: the run publishes
    and at most six requests were open at once."""
    assert main(["run", "--backend", "openai", "--model", "served-model", "--base-url",
                 vllm.url, "--concurrency", "6", "--year", "2023", "--areas", "MT",
                 "--shuffles", "2", "--db", str(demo_db), "--runs-dir", str(tmp_path / "runs"),
                 "--quiet"]) == 0
    assert len(vllm.bodies) == 45 * 2 and 1 < vllm.peak <= 6
    [(_, options)] = query_rows(demo_db, "SELECT label, options FROM model_runs WHERE "
                                             "backend = 'openai'")
    settings = json.loads(options)
    assert settings["spec"]["backend_options"]["concurrency"] == 6
    assert settings["scorer"]["concurrency"] == 6
