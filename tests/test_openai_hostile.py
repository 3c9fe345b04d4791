"""The OpenAI-compatible backend against endpoints that answer badly: no letter in the top-k,
impossible log-probabilities, no key for a remote endpoint, a request timeout to set.

Every endpoint here is a local HTTP server speaking the chat-completions API (no network):
``chat_endpoint`` of tests/openai_support.py.
"""

from __future__ import annotations

import hashlib
import logging
import math

import pytest

from cli import main as cli
from inference.backends import ScoringError
from inference.backends.openai.scorer import OpenAIScorer, letters_from_top_logprobs
from tests.db_support import query_rows
from tests.openai_support import (
    LETTERS_TOP,
    NO_LETTER_TOP,
    SECRET,
    cli_exit_code,
    count_openai_runs,
    openai_run_args,
    request,
)
from workflows.runs.folder import read_run_folders

LN = math.log


def test_a_run_whose_answers_mostly_carry_no_letter_is_refused(chat_endpoint, demo_db, tmp_path,
                                                               capsys):
    chat_endpoint.reply = lambda prompt: (NO_LETTER_TOP, 0.0)
    code = cli_exit_code(openai_run_args(demo_db, tmp_path / "runs", chat_endpoint.url))
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("error:"), err
    assert "no letter A–E" in err[0]
    for cause in ("does not answer with a letter", "prompt format", "top-k"):
        assert cause in err[0]
    assert count_openai_runs(demo_db) == 0, "a run without answers must not be published"
    [folder] = read_run_folders(tmp_path / "runs")
    assert folder.read_json("status.json")["status"] == "failed"

    # A few answers without a letter are blanks of a run that is still published.
    def mostly_letters(prompt):
        rare = hashlib.sha256(prompt.encode()).digest()[0] < 13  # about one prompt in twenty
        return (NO_LETTER_TOP if rare else LETTERS_TOP), 0.0

    chat_endpoint.reply = mostly_letters
    chat_endpoint.prompts.clear()
    assert cli.main(openai_run_args(demo_db, tmp_path / "runs2", chat_endpoint.url)) == 0
    expected_blanks = sum(mostly_letters(p)[0] is NO_LETTER_TOP for p in chat_endpoint.prompts)
    assert 0 < expected_blanks < len(chat_endpoint.prompts) / 2
    assert count_openai_runs(demo_db) == 1
    blanks = query_rows(demo_db, "SELECT count(*) FROM model_responses r JOIN model_runs m "
                                 "USING (run_id) WHERE m.backend = 'openai' AND r.choice = '.'")
    assert blanks[0][0] == expected_blanks


IMPOSSIBLE = [
    ([("A", 3.4935), ("B", LN(0.1))], "3.49"),  # what stored a letter mass of 32.9
    ([("A", float("nan")), ("B", LN(0.1))], "nan"),
    ([("A", float("inf")), ("B", LN(0.1))], "inf"),
    ([("A", LN(0.9)), ("B", LN(0.8)), ("C", LN(0.7))], "add up to 2.4"),
]


def test_impossible_log_probabilities_are_refused(chat_endpoint):
    for top, what in IMPOSSIBLE:
        with pytest.raises(ScoringError, match="impossible") as caught:
            letters_from_top_logprobs(top)
        assert what in str(caught.value)
        chat_endpoint.reply = lambda prompt, top=top: (top, 0.0)
        chat_endpoint.prompts.clear()
        scorer = OpenAIScorer("scripted", base_url=chat_endpoint.url, backoff_base=0.01)
        with pytest.raises(ScoringError, match="impossible") as caught:
            scorer.score([request("Pimpossible")])
        assert "Pimpossible shuffle 0" in str(caught.value) and what in str(caught.value)
        assert len(chat_endpoint.prompts) == 1, "an impossible answer is not retried"
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
    code = cli_exit_code(["run", "--backend", "openai", "--model", "gpt-4o-mini", "--year", "2023",
                          "--areas", "MT", "--db", str(demo_db),
                          "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("error:") and "OPENAI_API_KEY" in err[0], err
    assert not (tmp_path / "runs").exists(), "refused before a run folder was made"


def test_request_timeout_flag_reaches_the_client(chat_endpoint, demo_db, tmp_path, caplog):
    slow_once = set()

    def first_answer_slow(prompt):
        with chat_endpoint.lock:
            first = not slow_once
            slow_once.add(prompt)
        return LETTERS_TOP, (1.5 if first else 0.0)

    chat_endpoint.reply = first_answer_slow
    with caplog.at_level(logging.WARNING):
        code = cli_exit_code(openai_run_args(demo_db, tmp_path / "runs", chat_endpoint.url,
                                             "--request-timeout", "0.25"))
    assert code == 0
    assert "timeout after 0.25s; retrying" in caplog.text
    [folder] = read_run_folders(tmp_path / "runs")
    assert folder.read_json("status.json")["scorer"]["timeout"] == 0.25
    assert SECRET not in caplog.text


@pytest.mark.parametrize("value", ["0", "-1", "nan", "soon"])
def test_request_timeout_must_be_a_positive_number(demo_db, tmp_path, capsys, value):
    code = cli_exit_code(["run", "--backend", "openai", "--model", "m", "--base-url",
                          "http://127.0.0.1:9/v1", "--year", "2023", "--db", str(demo_db),
                          "--request-timeout", value])
    assert code != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "--request-timeout" in err[0], err
