"""Limits of an OpenAI-compatible run (issue 22, item 7): the share of answers without a letter
a run may have and still be published, a cancel that acts within one request, a request
timeout that bounds how long a hanging endpoint holds a request, and a bounded
``full-answer-prob`` probe.

Every endpoint is one of the local servers speaking the OpenAI API that the neighbouring tests
also use (tests/openai_support.py: ``chat_endpoint``, chat completions with a top-k and a delay
per prompt; ``openai_server``, chat and completions with echoed prompt log-probabilities).
No network.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from inference.backends import NO_CHOICE, BackendSettingsError, ScoringError
from inference.backends.openai.answers import check_endpoint
from inference.backends.openai.scorer import OpenAIScorer
from inference.plan import RunSpec
from inference.run_scoring import NoLetterError, check_answer_letters
from tests.openai_support import (
    LETTERS_TOP,
    NO_LETTER_TOP,
    REPLIES,
    cli_exit_code,
    count_openai_runs,
    echo_choice,
    fake_scorer,
    openai_run_args,
    question_requests,
    request,
)
from workflows.runs import service
from workflows.runs.folder import RunFolder, read_run_folders

#: What the run's refusal and warning say, with the share and the answers counted.
SHARE_WORDS = r"(\d+\.\d)% of (\d[\d,]*) answers had no letter A–E \(limit 10%\)"
#: Seconds a silent endpoint keeps a request waiting: longer than any test here.
SILENT = 60.0


def _share_of(prompts: list[str], lacks: callable) -> tuple[int, int]:
    """(prompts whose answer lacks a letter, prompts) among the prompts the endpoint got."""
    return sum(bool(lacks(p)) for p in prompts), len(prompts)


def _hashed_below(prompt: str, byte: int) -> bool:
    """True for about byte/256 of all prompts, the same ones every time."""
    return hashlib.sha256(prompt.encode()).digest()[0] < byte


def _wait_until(predicate, timeout: float = 120.0, what: str = "condition",
                log: Path | None = None) -> None:
    """Poll ``predicate`` until it is true; AssertionError naming ``what`` (and showing the
    worker's ``log``, when given) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    shown = log.read_text()[-3000:] if log is not None and log.exists() else ""
    raise AssertionError(f"{what}: not reached in {timeout:g} s\n{shown}")


# ---------------------------------------------------------------- a. answers without a letter

def test_a_letter_prob_run_above_the_limit_is_refused_with_its_share(chat_endpoint, demo_db,
                                                                     tmp_path, capsys):
    """About 30% of the answers have no letter in the top-k: far fewer than most, and still
    not fit to publish."""
    def lacks(prompt: str) -> bool:
        return _hashed_below(prompt, 77)

    chat_endpoint.reply = lambda prompt: (NO_LETTER_TOP if lacks(prompt) else LETTERS_TOP, 0.0)
    code = cli_exit_code(openai_run_args(demo_db, tmp_path / "runs", chat_endpoint.url))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1 and err[0].startswith("error:"), err
    missing, answers = _share_of(chat_endpoint.prompts, lacks)
    assert 0.1 * 90 < missing < answers / 2
    shown = re.search(SHARE_WORDS + "; not published", err[0])
    assert shown, err[0]
    assert shown.groups() == (f"{100 * missing / answers:.1f}", f"{answers:,}")
    assert count_openai_runs(demo_db) == 0
    [folder] = read_run_folders(tmp_path / "runs")
    assert folder.read_json("status.json")["status"] == "failed"
    kept = folder.read_parts()
    assert len(kept) == answers, "every answer received is kept in the run folder"
    assert int((kept["choice"] == ".").sum()) == missing


def test_a_generate_run_above_the_limit_is_refused(openai_server, demo_db, tmp_path, capsys):
    """A third of the scripted replies match no letter pattern: unparsed answers count too."""
    def lacks(body: dict) -> bool:
        return REPLIES[body["seed"] % len(REPLIES)][1] is None

    code = cli_exit_code(["run", "--backend", "openai", "--model", "fake", "--base-url",
                          openai_server.url, "--year", "2023", "--areas", "MT", "--shuffles", "2",
                          "--db", str(demo_db), "--runs-dir", str(tmp_path / "runs"), "--quiet",
                          "--answer-method", "generate"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1 and err[0].startswith("error:"), err
    bodies = [body for _, body in openai_server.bodies]
    missing = sum(lacks(body) for body in bodies)
    shown = re.search(SHARE_WORDS + "; not published", err[0])
    assert shown, err[0]
    assert shown.groups() == (f"{100 * missing / len(bodies):.1f}", f"{len(bodies):,}")
    assert "letter pattern" in err[0]
    assert count_openai_runs(demo_db) == 0
    [folder] = read_run_folders(tmp_path / "runs")
    kept = folder.read_parts()
    assert len(kept) == len(bodies) and int((kept["choice"] == "?").sum()) == missing


def test_a_run_below_the_limit_is_published_with_a_warning(chat_endpoint, demo_db, tmp_path,
                                                            caplog):
    def lacks(prompt: str) -> bool:
        return _hashed_below(prompt, 10)  # about 4% of the prompts

    chat_endpoint.reply = lambda prompt: (NO_LETTER_TOP if lacks(prompt) else LETTERS_TOP, 0.0)
    with caplog.at_level(logging.WARNING):
        code = cli_exit_code(openai_run_args(demo_db, tmp_path / "runs", chat_endpoint.url))
    assert code == 0
    missing, answers = _share_of(chat_endpoint.prompts, lacks)
    assert 0 < missing <= 0.1 * answers
    warnings = [r.getMessage() for r in caplog.records if "no letter" in r.getMessage()]
    assert len(warnings) == 1, warnings
    shown = re.search(SHARE_WORDS, warnings[0])
    assert shown and shown.groups() == (f"{100 * missing / answers:.1f}", f"{answers:,}")
    assert warnings[0].startswith("warning:")
    assert count_openai_runs(demo_db) == 1


def test_the_limit_and_when_a_run_in_progress_stops():
    """10% of the answers without a letter is still published, more is not; a run in progress
    stops once it can no longer pass (more than 10% of all the answers it will have), or once
    most of at least 100 answers lack a letter, and not before."""
    check_answer_letters(135, 1350)
    check_answer_letters(135, 1350, method="generate", total=1350)
    with pytest.raises(NoLetterError, match=re.escape("10.1% of 1,350 answers had no letter "
                                                      "A–E (limit 10%); not published.")):
        check_answer_letters(136, 1350)
    check_answer_letters(9, 20, total=90)  # 45% so far, but the rest may still pass
    with pytest.raises(NoLetterError, match="stopped after 20 of its 90 answers"):
        check_answer_letters(10, 20, total=90)
    check_answer_letters(99, 198, total=10_000)  # half of 198: not yet most
    with pytest.raises(NoLetterError, match=r"50\.5% of 200 answers"):
        check_answer_letters(101, 200, total=10_000)


def test_a_full_answer_whose_every_option_is_impossible_has_no_letter(openai_server):
    """An echoed text whose continuation tokens all have log-probability -inf gives an option
    no score at all; when all five are like that the answer has no letter (counted like a
    top-k without one) instead of probabilities that do not add up to 1."""
    requests = question_requests(n_items=1, n_shuffles=3)
    blank = requests[0].prompt(1)
    answer = openai_server.answer

    def impossible_for_shuffle_1(path: str, body: dict):
        status, reply = answer(path, body)
        if path.endswith("/completions") and body["prompt"][0].startswith(blank):
            reply["choices"] = [echo_choice(i, text) for i, text in enumerate(body["prompt"])]
            for choice in reply["choices"]:
                values = choice["logprobs"]["token_logprobs"]
                choice["logprobs"]["token_logprobs"] = [values[0]] + [-math.inf] * (
                    len(values) - 1)
        return status, reply

    openai_server.answer = impossible_for_shuffle_1
    (result,) = fake_scorer(openai_server, "full-answer-prob").score(requests)
    assert result.choice[1] == NO_CHOICE
    np.testing.assert_allclose(result.probs[1], 0.2)
    assert result.choice[0] != NO_CHOICE and result.choice[2] != NO_CHOICE


# ---------------------------------------------------------------- b. cancel within one request

def test_cancel_stops_a_background_run_within_one_request(chat_endpoint, demo_db, tmp_path):
    """The second batch takes 25 request-durations (100 requests of 1 s, 4 at a time); a cancel
    sent while it runs ends the run within a few request-durations, discards that batch, keeps
    the first and sends no request of the second batch that was not already in flight."""
    delay, batch_items, shuffles, concurrency = 1.0, 5, 20, 4
    per_batch = batch_items * shuffles

    def first_batch_fast(prompt: str):
        with chat_endpoint.lock:
            count = len(chat_endpoint.prompts)
        return LETTERS_TOP, (0.0 if count <= per_batch else delay)

    chat_endpoint.reply = first_batch_fast
    runs_dir = tmp_path / "runs"
    spec = RunSpec(model="scripted", backend="openai", year=2023, areas=("MT",),
                   languages=("pt",), shots=(0,), n_shuffles=shuffles, seed=1,
                   backend_options={"base_url": chat_endpoint.url})
    launched = service.start_in_background(spec, demo_db, runs_dir, batch_items=batch_items)
    log = launched.folder / "log.txt"
    _wait_until(lambda: len(chat_endpoint.prompts) > per_batch + concurrency,
                what="the second batch under way", log=log)
    asked = time.monotonic()
    service.cancel(spec.run_id, runs_dir)
    folder = RunFolder(launched.folder)

    def cancelled() -> bool:
        return ((folder.read_json("status.json") or {}).get("status") == "cancelled"
                and not folder.is_locked())

    _wait_until(cancelled, what="status cancelled, lock released", log=log)
    took = time.monotonic() - asked
    assert took < 4 * delay, f"cancel took {took:.1f} s; the batch takes {25 * delay:.0f} s"

    codes: list[int] = []
    _wait_until(lambda: _exited(launched.pid, codes), timeout=30, what="the worker's exit",
                log=log)
    assert codes == [130], "the worker ends as a cancelled run"
    sent_in_second_batch = len(chat_endpoint.prompts) - per_batch
    assert sent_in_second_batch <= 3 * concurrency, sent_in_second_batch
    assert len(folder.read_parts()) == per_batch, "the first batch is kept, the second not"
    assert "cancelled" in (folder.root / "log.txt").read_text()


def test_a_cancelled_worker_does_not_wait_for_its_hanging_requests(chat_endpoint, demo_db,
                                                                    tmp_path):
    """The second batch's requests get no answer (request timeout 30 s): the cancelled worker
    still ends at once, instead of waiting out the timeout of the requests in flight."""
    per_batch = 2 * 2  # 2 items × 2 shuffles

    def second_batch_hangs(prompt: str):
        with chat_endpoint.lock:
            count = len(chat_endpoint.prompts)
        return LETTERS_TOP, (0.0 if count <= per_batch else SILENT)

    chat_endpoint.reply = second_batch_hangs
    runs_dir = tmp_path / "runs"
    spec = RunSpec(model="scripted", backend="openai", year=2023, areas=("MT",),
                   languages=("pt",), shots=(0,), n_shuffles=2, seed=2,
                   backend_options={"base_url": chat_endpoint.url, "timeout": 30.0})
    launched = service.start_in_background(spec, demo_db, runs_dir, batch_items=2)
    log = launched.folder / "log.txt"
    _wait_until(lambda: len(chat_endpoint.prompts) >= 2 * per_batch,
                what="the second batch's four requests in flight", log=log)
    asked = time.monotonic()
    service.cancel(spec.run_id, runs_dir)
    codes: list[int] = []
    _wait_until(lambda: _exited(launched.pid, codes), timeout=90, what="the worker's exit",
                log=log)
    took = time.monotonic() - asked
    assert codes == [130]
    assert took < 5.0, f"the worker took {took:.1f} s to end; its requests would hang 30 s"
    folder = RunFolder(launched.folder)
    assert folder.read_json("status.json")["status"] == "cancelled"
    assert len(folder.read_parts()) == per_batch


def _exited(pid: int, codes: list[int]) -> bool:
    """True once the child ``pid`` has ended; its exit code is appended to ``codes``."""
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        codes.append(os.waitstatus_to_exitcode(status))
    return bool(done)


# ---------------------------------------------------------------- c. a hanging endpoint

def test_a_hanging_endpoint_fails_a_request_within_two_timeouts(chat_endpoint):
    """With ``--request-timeout 1`` and the other settings at their defaults, an endpoint that
    never answers fails a request after two attempts and one short wait (at most
    2 × 1 s + 1.5 s), not after six attempts and five growing waits (over 21 s)."""
    chat_endpoint.reply = lambda prompt: (LETTERS_TOP, SILENT)
    scorer = OpenAIScorer("scripted", base_url=chat_endpoint.url, timeout=1.0)
    started = time.monotonic()
    with pytest.raises(ScoringError) as caught:
        scorer.score([request("Phang")])
    took = time.monotonic() - started
    assert len(chat_endpoint.prompts) == 2, "one retry after a timeout, no more"
    assert took < 2 * 1.0 + 1.5 * scorer.backoff_base + 3.0, f"took {took:.1f} s"
    message = str(caught.value)
    assert "Phang shuffle 0" in message and "did not answer within 1 s" in message, message


def test_a_run_against_a_hanging_endpoint_ends_within_two_timeouts(chat_endpoint, demo_db,
                                                                   tmp_path, capsys):
    chat_endpoint.reply = lambda prompt: (LETTERS_TOP, SILENT)
    started = time.monotonic()
    code = cli_exit_code(openai_run_args(demo_db, tmp_path / "runs", chat_endpoint.url,
                                         "--request-timeout", "1"))
    took = time.monotonic() - started
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1 and "did not answer within 1 s" in err[0], err
    assert took < 10.0, f"took {took:.1f} s; six attempts of one request take over 21 s"
    # The first four requests hung; each was tried twice; nothing else of the batch was sent.
    assert len(chat_endpoint.prompts) <= 2 * 4


# ---------------------------------------------------------------- d. the full-answer-prob probe

def test_the_probe_of_a_silent_endpoint_gives_up_within_seconds(openai_server):
    """The probe (run before a full-answer-prob run starts, also from the dashboard's server
    thread) keeps its own short timeout whatever the run's request timeout (60 s here)."""
    release = threading.Event()
    answer = openai_server.answer

    def silent(path: str, body: dict):
        release.wait(SILENT)
        return answer(path, body)

    openai_server.answer = silent
    outcome: dict[str, BaseException] = {}

    def probe() -> None:
        try:
            check_endpoint({"model": "fake", "base_url": openai_server.url, "timeout": 60.0,
                            "answer_method": "full-answer-prob"})
        except BaseException as error:  # noqa: BLE001 - kept for the assertions below
            outcome["error"] = error

    thread = threading.Thread(target=probe, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(12.0)
    took = time.monotonic() - started
    release.set()
    assert not thread.is_alive(), "the probe still held its thread after 12 s"
    assert took < 12.0
    error = outcome.get("error")
    assert isinstance(error, BackendSettingsError), error
    assert "did not answer the probe within 5 s" in str(error), str(error)
    assert "letter-prob or generate" not in str(error), "slowness is not a missing feature"
    assert len(openai_server.bodies) <= 2


def test_the_probe_still_refuses_a_server_without_prompt_log_probabilities(openai_server):
    openai_server.echo = "null"
    with pytest.raises(BackendSettingsError, match="prompt log-probabilities"):
        check_endpoint({"model": "fake", "base_url": openai_server.url,
                        "answer_method": "full-answer-prob"})
    assert len(openai_server.bodies) == 1, "a malformed probe answer is not asked again"
