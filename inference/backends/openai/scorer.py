"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, …).

This module is the ``letter-prob`` answer method; ``answers`` adds ``generate`` and
``full-answer-prob`` on the same requests, retries and thread pool
(:meth:`OpenAIScorer.with_retries`, :meth:`OpenAIScorer.per_shuffle`).

One request per (item, shuffle): the full prompt as a single user message, temperature 0, one
generated token (``max_tokens=1``, or ``max_completion_tokens`` via ``token_limit_param``),
``logprobs=True`` and ``top_logprobs=20``. The letters are read from the top-k list of the first
generated token (plus the generated token itself):

* token → letter: surrounding whitespace, a leading ``(``/``[``/``*`` and a trailing
  ``)``/``.``/``:``/``]``/``*`` are stripped; what is left must be one upper-case letter A–E
  ("A", " A", "(A", "(A)", "A)" all count; lower-case does not: "a" is a Portuguese word).
  Several tokens of one letter add up.
* floor: a letter missing from the top-k gets ``min(floor, p_k)`` where ``p_k`` is the smallest
  probability in the top-k (a missing letter is at most that likely) and ``floor`` defaults to
  1e-6. Then the five values are normalised.
* ``letter_mass`` = the summed probability of the letters actually found (no floors).
* ``choice`` = the most likely letter *found*; -1 (no answer) when the top-k holds no letter.
  A run is not published when more than ``NO_LETTER_LIMIT`` (10%) of its answers have none
  (``inference.run_scoring``).
* impossible values are refused, never scored: a log-probability above 0 or NaN or +inf, or a
  top-k whose probabilities add up to more than 1 (both beyond ``ROUNDING_SLACK``) raise
  :class:`ImpossibleLogprobError` at once (an endpoint that sends logits will not mend on retry).

Requests go to ``base_url``, else the OpenAI API, never to ``$OPENAI_BASE_URL``; the API key
goes only to an endpoint the operator configured, read from the variable that endpoint names
(``key``; by default the OpenAI API with ``OPENAI_API_KEY``); any other URL gets a
placeholder, and a configured endpoint whose variable is unset is refused when the scorer is
made, before any request (``client.openai_client`` builds the client so). The key
is never logged, put in ``repr``/``describe()`` or in error messages (messages are redacted and
exceptions are raised without the client's exception chained, which holds the request headers).

Timeouts: ``timeout`` (``enem-llm run --request-timeout``; default 60 s) bounds each attempt
of a request in wall-clock time, from connecting to the answer's last byte
(``deadline``): an endpoint that never answers, sends its answer a byte at a time, or
streams a body (chunked or server-sent events) that never ends fails the attempt after
``timeout``, and an answer over ``MAX_RESPONSE_BYTES`` (64 MiB) fails the request at once. At
most ``timeout_attempts`` (``TIMEOUT_ATTEMPTS`` = 2) attempts of one request may end in a
timeout: the retry catches a one-off stall, and such an endpoint fails each request after at
most **2 × timeout plus one wait of at most 1.5 × backoff_base** (7.5 s at
``--request-timeout 3``; 121.5 s at the default 60), instead of six timeouts and five growing
waits. The error (:class:`RequestTimeoutError`) says the endpoint did not answer within
``timeout``.

Retries: HTTP 429, 408/409, 5xx, timeouts (as above) and connection errors are retried with
exponential backoff and jitter (``backoff_base·2^k`` capped at ``backoff_max``, times a random
factor in [0.5, 1.5); a ``Retry-After`` header is honoured up to ``backoff_max``), at most
``max_attempts`` tries in all. A malformed answer (not JSON, no choices, no logprobs) is retried
up to ``malformed_attempts`` times. Other HTTP errors fail at once. Any final failure raises
:class:`~inference.backends.base.ScoringError` naming the item and shuffle; ``score`` then
cancels the requests not yet sent and returns without waiting for those in flight (they send
no retry). Requests run on a thread pool of ``concurrency`` workers.

Stopping: after :meth:`OpenAIScorer.watch_stop` (``workflows.runs.execution`` passes the event
its SIGTERM/SIGINT handler sets), no request is sent once the event is set, a wait between
retries ends at once, and ``score`` raises :class:`~inference.backends.base.ScoringCancelled`
within ``STOP_POLL_SECONDS`` (requests not yet sent are cancelled, those in flight are not
waited for): a cancel acts within one request, not after the whole batch. The requests in
flight give up too, within ``deadline.POLL_SECONDS`` of the stop or of their batch's
failure, whatever the endpoint sends, so their threads end and the process can exit.
"""

from __future__ import annotations

import json
import logging
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any, TypeVar

import httpx2
import numpy as np
import openai

from enem.areas import OPTION_LETTERS as LETTERS
from inference.backends.base import (
    NO_CHOICE,
    ItemScores,
    LetterScores,
    ScoreRequest,
    ScoringCancelled,
    ScoringError,
)
from inference.backends.openai.client import openai_client
from inference.backends.openai.deadline import RequestStopped, ResponseTooLarge, request_deadline
from inference.backends.openai.key import API_KEY_ENV, NO_KEY

logger = logging.getLogger(__name__)
T = TypeVar("T")

__all__ = ["API_KEY_ENV", "NO_KEY", "ImpossibleLogprobError", "MalformedResponseError",
           "OpenAIScorer", "letter_of_token", "letters_from_top_logprobs"]

#: How far a log-probability may sit above 0, and the top-k's total probability above 1, from
#: the endpoint's floating-point rounding; beyond it the values are impossible.
ROUNDING_SLACK = 1e-3
#: Attempts of one request that may end in a timeout: the first and one retry (a stall that does
#: not come back). Each takes ``timeout``, so a hanging endpoint fails a request after about
#: twice the request timeout instead of ``max_attempts`` times it plus growing waits.
TIMEOUT_ATTEMPTS = 2
#: How often ``score`` looks at the stop event while it waits for answers (seconds): a cancel
#: is noticed this soon, and the process wakes only this often while a request hangs.
STOP_POLL_SECONDS = 0.1

#: The batch of :meth:`OpenAIScorer.per_shuffle` a pool thread works for: its ``abandon`` event
#: is set when the batch ends early (a failure or a stop), so requests in flight send no retry.
_batch = threading.local()


class MalformedResponseError(ScoringError):
    """The endpoint answered 200 but without usable logprobs."""


class ImpossibleLogprobError(ScoringError):
    """The endpoint's log-probabilities cannot be log-probabilities (above 0, NaN, +inf, or a
    top-k whose probabilities add up to more than 1)."""


class RequestTimeoutError(ScoringError):
    """The endpoint did not answer one request within the request timeout, ``timeout_attempts``
    times: it is not answering, or it is too slow for that timeout."""


class _Malformed(Exception):
    pass


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class _TimedOut(_Retryable):
    """An attempt that got no answer within ``timeout``."""


def letter_of_token(token: str) -> int | None:
    """Index 0..4 of the answer letter a token stands for, or None (see module docstring)."""
    text = token.strip().lstrip("([*").strip().rstrip(").:]*").strip()
    return LETTERS.index(text) if len(text) == 1 and text in LETTERS else None


def letters_from_top_logprobs(
    entries: Sequence[tuple[str, float]], floor: float = 1e-6
) -> tuple[np.ndarray, float, int]:
    """(probs (5,) normalised, letter mass, choice index or -1) from (token, logprob) pairs.

    Duplicate tokens count once; a log-probability of -inf (probability 0) is left out. See the
    module docstring for the floor rule. Raises ImpossibleLogprobError for a log-probability
    above 0, NaN or +inf, or a top-k whose probabilities add up to more than 1.
    """
    seen: dict[str, float] = {}
    for token, logprob in entries:
        if logprob is None:
            continue
        logprob = checked_logprob(token, logprob)
        if token not in seen and logprob != -math.inf:
            seen[token] = logprob
    if not seen:
        raise _Malformed("no finite logprobs")
    total = math.fsum(math.exp(logprob) for logprob in seen.values())
    if total > 1.0 + ROUNDING_SLACK:
        raise ImpossibleLogprobError(
            f"impossible top-k: the probabilities of its {len(seen)} tokens add up to "
            f"{total:.3g}, more than 1: the endpoint does not send log-probabilities")
    found = np.zeros(5)
    hit = np.zeros(5, dtype=bool)
    for token, logprob in seen.items():
        index = letter_of_token(token)
        if index is not None:
            found[index] += math.exp(logprob)
            hit[index] = True
    p_min = math.exp(min(seen.values()))
    raw = np.where(hit, found, min(floor, p_min))
    mass = float(found.sum())
    choice = int(np.argmax(np.where(hit, found, -1.0))) if hit.any() else NO_CHOICE
    return raw / raw.sum(), mass, choice


def checked_logprob(token: str, logprob: float) -> float:
    """``logprob`` as a float, at most 0; ImpossibleLogprobError when it is above 0 (beyond
    ``ROUNDING_SLACK``), NaN or +inf."""
    logprob = float(logprob)
    if math.isnan(logprob) or logprob > ROUNDING_SLACK:
        raise ImpossibleLogprobError(
            f"impossible log-probability {logprob:.3g} for token {token!r} (a log-probability "
            "is at most 0): the endpoint does not send log-probabilities (logits or scores?)")
    return min(logprob, 0.0)


def response_choices(body: str) -> list[dict]:
    """The ``choices`` of a JSON response body (each a dict, at least one), else _Malformed."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, TypeError) as exc:
        raise _Malformed(f"body is not JSON ({exc})") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if (not isinstance(choices, list) or not choices
            or not all(isinstance(choice, dict) for choice in choices)):
        raise _Malformed("no choices")
    return choices


def _parse(body: str) -> list[tuple[str, float]]:
    """(token, logprob) pairs of the first generated token of a chat-completions JSON body."""
    choices = response_choices(body)
    logprobs = choices[0].get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        raise _Malformed("no logprobs")
    first = content[0]
    tops = first.get("top_logprobs")
    if not isinstance(tops, list) or not tops:
        raise _Malformed("no top_logprobs")
    pairs = [(t.get("token"), t.get("logprob")) for t in tops if isinstance(t, dict)]
    pairs.append((first.get("token"), first.get("logprob")))
    return [
        (tok, float(lp)) for tok, lp in pairs
        if isinstance(tok, str) and isinstance(lp, (int, float))
    ]


class OpenAIScorer:
    """Letter scorer over an OpenAI-compatible chat-completions API (see module docstring)."""

    name = "openai"
    answer_method = "letter-prob"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout: float = 60.0,
        max_attempts: int = 6,
        malformed_attempts: int = 3,
        backoff_base: float = 1.0,
        backoff_max: float = 30.0,
        concurrency: int = 4,
        top_logprobs: int = 20,
        floor: float = 1e-6,
        token_limit_param: str = "max_tokens",
        temperature: float = 0.0,
        seed: int | None = None,
        timeout_attempts: int = TIMEOUT_ATTEMPTS,
    ):
        if token_limit_param not in ("max_tokens", "max_completion_tokens"):
            raise ValueError("token_limit_param must be 'max_tokens' or 'max_completion_tokens'")
        if min(max_attempts, malformed_attempts, concurrency, timeout_attempts) < 1:
            raise ValueError("max_attempts, malformed_attempts, timeout_attempts and "
                             "concurrency must be >= 1")
        if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
            raise ValueError(f"the request timeout must be a positive number of seconds, "
                             f"got {timeout!r}")
        self._client, key = openai_client(base_url, timeout)
        self._secrets = tuple(s for s in (key,) if len(s) >= 4)
        del key
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.malformed_attempts = malformed_attempts
        self.timeout_attempts = timeout_attempts
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.concurrency = concurrency
        self.top_logprobs = top_logprobs
        self.floor = floor
        self.token_limit_param = token_limit_param
        self.temperature = temperature
        self.seed = seed
        self._rng = random.Random()
        self._rng_lock = threading.Lock()
        self._stop: threading.Event | None = None

    def __repr__(self) -> str:
        return f"OpenAIScorer(model={self.model!r}, base_url={self.base_url!r})"

    def describe(self) -> dict[str, Any]:
        """Settings for the run record (no key)."""
        return {
            "backend": self.name,
            "answer_method": self.answer_method,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "top_logprobs": self.top_logprobs,
            "timeout": self.timeout,
            "floor": self.floor,
            "token_limit_param": self.token_limit_param,
            "concurrency": self.concurrency,
            "seed": self.seed,
            "openai": openai.__version__,
        }

    def watch_stop(self, stop: threading.Event | None) -> None:
        """Abandon work once ``stop`` is set (None: never): see "Stopping" in the module
        docstring. A run's executor calls it so that a cancel acts within one request."""
        self._stop = stop

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    # ------------------------------------------------------------------ one request

    def _call(self, prompt: str) -> str:
        """POST one letter-prob request; returns the response body (see :meth:`_post`)."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.temperature,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            self.token_limit_param: 1,
        }
        if self.seed is not None:
            kwargs["seed"] = self.seed
        return self._post(self._client.chat.completions.with_raw_response.create, kwargs)

    def _post(self, create: Callable[..., Any], kwargs: dict[str, Any]) -> str:
        """POST once with the client's raw-response ``create`` (chat or completions); returns
        the response body, or raises _Retryable / _Malformed / ScoringError, or
        ScoringCancelled when a stop comes while it waits. The whole attempt, answer
        included, ends within ``timeout`` seconds (``deadline``)."""
        try:
            with request_deadline(self.timeout, stopped=self._stopped):
                raw = create(**kwargs)
                body = raw.http_response.text
        except (openai.APITimeoutError, httpx2.TimeoutException):
            raise _TimedOut(f"timeout after {self.timeout}s") from None
        except RequestStopped:
            raise ScoringCancelled("stopped while waiting for the answer") from None
        except ResponseTooLarge as exc:
            raise ScoringError(str(exc)) from None
        except openai.APIConnectionError as exc:
            raise _Retryable(f"connection error: {self._redact(str(exc))}") from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            message = self._redact(str(exc))[:500]
            if status in (408, 409, 429) or status >= 500:
                raise _Retryable(f"HTTP {status}: {message}", _retry_after(exc)) from None
            raise ScoringError(f"HTTP {status}: {message}") from None
        except openai.APIResponseValidationError as exc:
            raise _Malformed(self._redact(str(exc))) from None
        except httpx2.HTTPError as exc:  # the body failed after the headers (a dropped stream)
            raise _Retryable(f"connection error: {self._redact(str(exc))}") from None
        return body

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        with self._rng_lock:
            jitter = 0.5 + self._rng.random()
        delay = min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)) * jitter
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.backoff_max))
        return delay

    def _stopped(self) -> bool:
        """True once the run's stop event or the current batch's ``abandon`` event (set on the
        batch's first failure or on a stop) is set; asked by a request waiting for bytes."""
        return any(event is not None and event.is_set()
                   for event in (self._stop, getattr(_batch, "abandon", None)))

    def _raise_if_stopped(self, where: str) -> None:
        """ScoringCancelled when :meth:`_stopped`."""
        if self._stopped():
            raise ScoringCancelled(f"{where}: stopped before its answer")

    def _pause(self, seconds: float, where: str) -> None:
        """Wait ``seconds`` between two attempts; ScoringCancelled as soon as a stop comes.
        Within a batch it waits on the batch's ``abandon`` event, which ``per_shuffle`` sets
        on a stop; outside one, on the run's stop event."""
        event = getattr(_batch, "abandon", None) or self._stop
        if event is None:
            time.sleep(seconds)
        elif event.wait(seconds):
            raise ScoringCancelled(f"{where}: stopped before its answer")

    def with_retries(self, attempt: Callable[[], T], where: str) -> T:
        """``attempt()`` (one request and the reading of its answer), retried as the module
        docstring says; a final failure raises ScoringError naming ``where`` (a request that
        timed out ``timeout_attempts`` times: RequestTimeoutError), a stop ScoringCancelled."""
        transport_failures = 0
        malformed = 0
        timeouts = 0
        while True:
            self._raise_if_stopped(where)
            try:
                return attempt()
            except _Retryable as exc:
                transport_failures += 1
                if isinstance(exc, _TimedOut):
                    timeouts += 1
                    if timeouts >= self.timeout_attempts:
                        raise RequestTimeoutError(
                            f"{where}: the endpoint did not answer within {self.timeout:g} s "
                            f"(the request timeout; {timeouts} attempt"
                            f"{'s' if timeouts > 1 else ''}): it is not answering, or it is "
                            "too slow for that timeout") from None
                if transport_failures + malformed >= self.max_attempts:
                    raise ScoringError(
                        f"{where}: giving up after {transport_failures + malformed} attempts: {exc}"
                    ) from None
                self._raise_if_stopped(where)
                delay = self._delay(transport_failures, exc.retry_after)
                logger.warning("%s: %s; retrying in %.2fs", where, exc, delay)
                self._pause(delay, where)
            except _Malformed as exc:
                malformed += 1
                if malformed >= self.malformed_attempts:
                    raise MalformedResponseError(
                        f"{where}: malformed response {malformed} times: {self._redact(str(exc))}"
                    ) from None
                logger.warning("%s: malformed response (%s); retrying", where, exc)
            except ScoringError as exc:
                raise type(exc)(f"{where}: {exc}") from None

    def score_prompt(self, prompt: str, where: str = "prompt") -> tuple[np.ndarray, float, int]:
        """(probs (5,), letter mass, choice) of one full prompt, with retries."""
        return self.with_retries(
            lambda: letters_from_top_logprobs(_parse(self._call(prompt)), self.floor), where)

    # ------------------------------------------------------------------ interface

    def per_shuffle(self, requests: Sequence[ScoreRequest],
                    work: Callable[[str, str, ScoreRequest, int], T]) -> list[list[T]]:
        """``work(prompt, where, request, shuffle)`` for every shuffle of every request on the
        thread pool; results per request, in shuffle order.

        The first failure, or a stop (:meth:`watch_stop`; raised as ScoringCancelled), abandons
        the batch and is raised at once: no request of the batch is sent after it, those not yet
        sent are cancelled, and those in flight are not waited for and send no retry (their
        batch's ``abandon`` event is set)."""
        out: list[list[Any]] = [[None] * r.n_shuffles for r in requests]
        abandon = threading.Event()
        failures: list[BaseException] = []

        def in_batch(prompt: str, where: str, req: ScoreRequest, shuffle: int) -> T:
            _batch.abandon = abandon
            try:
                return work(prompt, where, req, shuffle)
            except BaseException as error:
                # The batch's failure: recorded and the batch abandoned here, in the pool
                # thread, so that no thread sends another request of it meanwhile.
                if not abandon.is_set():
                    failures.append(error)
                    abandon.set()
                raise
            finally:
                _batch.abandon = None

        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            self._raise_if_stopped("the batch")
            futures = {
                pool.submit(in_batch, req.prompt(s), f"{req.key} shuffle {s}", req, s): (i, s)
                for i, req in enumerate(requests) for s in range(req.n_shuffles)
            }
            pending = set(futures)
            while pending:
                if failures:
                    raise failures[0]
                if self._stop is not None and self._stop.is_set():
                    raise ScoringCancelled(
                        f"stopped with {len(pending):,} of the batch's {len(futures):,} "
                        "requests unanswered")
                done, pending = wait(pending, timeout=STOP_POLL_SECONDS,
                                     return_when=FIRST_COMPLETED)
                if failures:
                    raise failures[0]
                for future in done:
                    i, s = futures[future]
                    out[i][s] = future.result()
        except BaseException:
            abandon.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return out

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        """Score every shuffle of every request concurrently; results in request order."""
        found = self.per_shuffle(requests, lambda prompt, where, *_: self.score_prompt(prompt,
                                                                                       where))
        results = []
        for req, rows in zip(requests, found, strict=True):
            probs, mass, choice = zip(*rows, strict=True)
            results.append(ItemScores(req.key, np.array(probs), np.array(mass),
                                      np.array(choice, dtype=np.int64)))
        return results


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds from a Retry-After header, if any."""
    try:
        value = exc.response.headers.get("retry-after")
        return None if value is None else max(0.0, float(value))
    except (AttributeError, ValueError):
        return None
