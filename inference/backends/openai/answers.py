"""The OpenAI-compatible backend's other two answer methods (see ``inference.answer_methods``).

Both reuse :class:`~inference.backends.openai.scorer.OpenAIScorer`'s key handling, retries
(``with_retries``) and thread pool (``per_shuffle``): one request per (item, shuffle).

:class:`OpenAIGenerateScorer` (``generate``). A chat-completions request with the prompt as the
user message, ``temperature`` (default 0.6, the paper's), at most ``max_new_tokens`` tokens
and ``seed`` = ``sampling_seed(run seed, item, shuffle)`` (a server that ignores ``seed``
cannot be made reproducible from here). The reply's text (``message.content``; ``null`` is an
empty answer) is kept, and its letter read with ``inference.answer_methods.parse_letter``; a
reply matching no pattern is unparsed (probabilities uniform, choice ``NO_CHOICE``, stored as
``?`` and left out of the scores).

:class:`OpenAIFullAnswerScorer` (``full-answer-prob``). A completions-API request per shuffle
whose ``prompt`` is the list of its five texts ``prompt + continuation(letter, option)``, with
``echo=True``, ``logprobs=1`` and ``max_tokens=0``: the server generates nothing and returns
the log-probability of every token of each text (``tokens``, ``token_logprobs``,
``text_offset``). A text's *continuation tokens* are those holding at least one of its
characters after the prompt: from the last token starting at or before the prompt's end on (so
a token merged across the boundary, such as ``(B``, is scored, as the transformers backend
does). An option's score is the mean of their log-probabilities; the probabilities are the
softmax of the five scores (``ItemScores.from_option_scores``). There is no shared
computation to ask for here; a server with prefix caching (vLLM) shares the prompt itself.

Not every server returns prompt log-probabilities (chat-only APIs, servers without ``echo``).
:func:`check_endpoint`, run before a run writes or sends anything
(``inference.backends.check_backend``), sends one such request and refuses a
``full-answer-prob`` run with a :class:`BackendSettingsError` when the answer lacks them. It
runs on the command line and on the dashboard's server thread (the Runs page checks a run
before launching it), so it is bounded: at most ``PROBE_SECONDS`` (5 s) in all, whatever the
run's ``--request-timeout`` (each attempt times out after the smaller of the two, one retry
only after a quick transient failure, none after a timeout or a malformed answer). An endpoint
that does not answer in time refuses the run with its own message: too slow or not answering.
"""

from __future__ import annotations

import copy
import math
import threading
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from enem.areas import OPTION_LETTERS
from inference.answer_methods import (
    DEFAULT_ANSWER_METHOD,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_TEMPERATURE,
    check_method,
    continuation,
    sampling_seed,
)
from inference.backends.base import (
    BackendSettingsError,
    ItemScores,
    LetterScores,
    ScoreRequest,
    ScoringError,
    displayed_options,
)
from inference.backends.openai.scorer import (
    OpenAIScorer,
    RequestTimeoutError,
    _Malformed,
    checked_logprob,
    response_choices,
)

#: The tiny request :func:`check_endpoint` sends: a prompt and one option text.
PROBE_PROMPT, PROBE_OPTION = "Resposta: (", "sim"
#: The longest the probe may hold its caller, all attempts included (seconds). A working server
#: answers a five-token echo at once, so one that needs longer is too slow or too busy to be
#: probed; and the caller may be the dashboard's server thread, which must not hang on it.
PROBE_SECONDS = 5.0
#: Attempts of the probe: one retry, for a quick transient failure (a dropped connection, a
#: 502); a timeout or a malformed answer is not asked again.
PROBE_ATTEMPTS = 2


def openai_scorer(model: str, *, answer_method: str = DEFAULT_ANSWER_METHOD,
                  **options: Any) -> OpenAIScorer:
    """The OpenAI-compatible backend for one answer method (the registry's entry):
    :class:`OpenAIScorer` (``letter-prob``), :class:`OpenAIFullAnswerScorer` or
    :class:`OpenAIGenerateScorer`, with ``options`` (``max_new_tokens`` for ``generate``)."""
    scorers = {"letter-prob": OpenAIScorer, "full-answer-prob": OpenAIFullAnswerScorer,
               "generate": OpenAIGenerateScorer}
    if "max_new_tokens" in options and check_method(answer_method) != "generate":
        raise ValueError(f"max_new_tokens applies to the generate answer method only, not "
                         f"{answer_method}")
    return scorers[check_method(answer_method)](model, **options)


def check_endpoint(options: Mapping[str, Any]) -> None:
    """Refuse (BackendSettingsError, one line) a ``full-answer-prob`` run whose server does not
    return prompt log-probabilities, or does not answer the probe within ``PROBE_SECONDS``;
    nothing to check (and nothing sent) for the other methods."""
    if options.get("answer_method") == "full-answer-prob":
        scorer = openai_scorer(**options)
        assert isinstance(scorer, OpenAIFullAnswerScorer)  # the method's entry in openai_scorer
        scorer.probe()


class OpenAIGenerateScorer(OpenAIScorer):
    """``generate`` over chat completions: :class:`OpenAIScorer`'s options with ``temperature``
    (default 0.6; 0 = greedy) and ``max_new_tokens`` (default 24)."""

    answer_method = "generate"

    def __init__(self, model: str, *, temperature: float = DEFAULT_TEMPERATURE,
                 max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
                 **options: Any):
        if temperature < 0 or max_new_tokens < 1:
            raise ValueError("temperature must be >= 0 and max_new_tokens >= 1")
        super().__init__(model, temperature=float(temperature), **options)
        self.max_new_tokens = int(max_new_tokens)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "max_new_tokens": self.max_new_tokens}

    def complete(self, prompt: str, seed: int, where: str = "prompt") -> str:
        """The text of one sampled reply to ``prompt`` (with retries)."""
        kwargs = {"model": self.model, "messages": [{"role": "user", "content": prompt}],
                  "temperature": self.temperature, "seed": seed,
                  self.token_limit_param: self.max_new_tokens}
        create = self._client.chat.completions.with_raw_response.create
        return self.with_retries(lambda: reply_text(self._post(create, kwargs)), where)

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        texts = self.per_shuffle(requests, lambda prompt, where, req, shuffle: self.complete(
            prompt, sampling_seed(req.seed, req.key, shuffle), where))
        return [ItemScores.from_generated(req.key, rows, bool(req.meta.get("reasoning")))
                for req, rows in zip(requests, texts, strict=True)]


class OpenAIFullAnswerScorer(OpenAIScorer):
    """``full-answer-prob`` over the completions API with prompt log-probabilities."""

    answer_method = "full-answer-prob"

    def option_means(self, prompt: str, options: Sequence[str],
                     where: str = "prompt") -> np.ndarray:
        """Mean log-probability of each option's continuation after ``prompt``, (len(options),),
        in one request (with retries)."""
        texts = [prompt + continuation(letter, option)  # the probe asks one option, not five
                 for letter, option in zip(OPTION_LETTERS, options, strict=False)]
        kwargs = {"model": self.model, "prompt": texts, "echo": True, "logprobs": 1,
                  "max_tokens": 0}
        create = self._client.completions.with_raw_response.create
        return self.with_retries(
            lambda: continuation_means(self._post(create, kwargs), len(prompt), len(texts)),
            where)

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        means = self.per_shuffle(requests, lambda prompt, where, req, shuffle: self.option_means(
            prompt, displayed_options(req)[shuffle], where))
        return [ItemScores.from_option_scores(req.key, np.array(rows))
                for req, rows in zip(requests, means, strict=True)]

    def probe(self) -> None:
        """One small request, bounded to ``PROBE_SECONDS`` in all (module docstring);
        BackendSettingsError when the server returns no prompt log-probabilities, cannot be
        reached, or does not answer in time."""
        prober = self._prober()
        gave_up = threading.Event()
        prober.watch_stop(gave_up)  # no retry once the caller has given up
        outcome: list[BaseException | None] = []

        def ask() -> None:
            try:
                prober.option_means(PROBE_PROMPT, [PROBE_OPTION], "probe")
            except BaseException as error:  # noqa: BLE001 - handed to the caller below
                outcome.append(error)
            else:
                outcome.append(None)

        # Its own thread, so that the caller waits PROBE_SECONDS at most even when connecting
        # and reading each take nearly the attempt's timeout.
        thread = threading.Thread(target=ask, name="full-answer-prob probe", daemon=True)
        thread.start()
        thread.join(PROBE_SECONDS)
        endpoint = f"{self.base_url or 'the OpenAI API'} with model {self.model!r}"
        if not outcome or isinstance(outcome[0], RequestTimeoutError):
            gave_up.set()
            waited = prober.timeout if outcome else PROBE_SECONDS
            raise BackendSettingsError(
                f"--answer-method full-answer-prob: {endpoint} did not answer the probe within "
                f"{waited:g} s (one small request, sent before the run starts to check that it "
                "returns prompt log-probabilities): the endpoint is too slow or not answering, "
                "so the run was not started; try again once it answers")
        if isinstance(outcome[0], ScoringError):
            raise BackendSettingsError(
                f"--answer-method full-answer-prob needs the prompt log-probabilities of the "
                f"completions API (echo=True, logprobs, max_tokens=0), and {endpoint} did not "
                f"return them ({outcome[0]}); use letter-prob or generate with this server"
            ) from None
        if outcome[0] is not None:
            raise outcome[0]

    def _prober(self) -> OpenAIFullAnswerScorer:
        """This scorer with the probe's limits: each attempt times out after the smaller of
        the request timeout and ``PROBE_SECONDS``, ``PROBE_ATTEMPTS`` attempts, no retry after
        a timeout or a malformed answer, waits of at most half a second."""
        prober = copy.copy(self)
        prober.timeout = min(self.timeout, PROBE_SECONDS)
        prober.max_attempts, prober.timeout_attempts = PROBE_ATTEMPTS, 1
        prober.malformed_attempts = 1
        prober.backoff_base, prober.backoff_max = 0.1, 0.5
        prober._client = self._client.with_options(timeout=prober.timeout, max_retries=0)
        return prober


def reply_text(body: str) -> str:
    """The text of the first reply of a chat-completions body (``null`` content: ``""``)."""
    message = response_choices(body)[0].get("message")
    if not isinstance(message, dict):
        raise _Malformed("no message")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise _Malformed("the message content is not text")
    return content or ""


def continuation_means(body: str, prompt_chars: int, n_texts: int) -> np.ndarray:
    """Mean log-probability of the continuation tokens of each of the ``n_texts`` echoed texts
    of a completions body, (n_texts,), in the texts' order; the prompt they share is
    ``prompt_chars`` characters long (see the module docstring). _Malformed when the body
    lacks the prompt log-probabilities."""
    choices = response_choices(body)
    by_index = {choice.get("index", at): choice for at, choice in enumerate(choices)}
    if sorted(by_index) != list(range(n_texts)):
        raise _Malformed(f"{len(choices)} choices for {n_texts} prompts")
    return np.array([_mean_after(by_index[at].get("logprobs"), prompt_chars)
                     for at in range(n_texts)])


def _mean_after(logprobs: Any, prompt_chars: int) -> float:
    """Mean log-probability of the tokens of one echoed text from the one holding character
    ``prompt_chars`` on."""
    if not isinstance(logprobs, dict):
        raise _Malformed("no prompt logprobs")
    tokens, values, offsets = (logprobs.get(name) for name in
                               ("tokens", "token_logprobs", "text_offset"))
    if not (isinstance(tokens, list) and isinstance(values, list) and isinstance(offsets, list)
            and len(tokens) == len(values) == len(offsets) and tokens):
        raise _Malformed("no prompt tokens with log-probabilities and text offsets")
    if not all(isinstance(o, int) for o in offsets) or offsets != sorted(offsets):
        raise _Malformed("text offsets are not increasing integers")
    start = max((i for i, offset in enumerate(offsets) if offset <= prompt_chars), default=0)
    if start == 0:
        raise _Malformed("the echoed text does not reach the prompt's end")
    scored = values[start:]
    if not all(isinstance(v, (int, float)) for v in scored):
        raise _Malformed("a continuation token has no log-probability")
    total = math.fsum(checked_logprob(t, v)
                      for t, v in zip(tokens[start:], scored, strict=True))
    return total / len(scored)
