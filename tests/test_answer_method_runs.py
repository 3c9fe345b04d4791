"""Runs with each answer method of the transformers backend on a tiny model and the small demo
year: the method is recorded with the run, generated answers keep their text, and an answer
whose letter cannot be read is stored as unparsed, counted, and left out of the scores."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli.errors import UsageError
from cli.main import build_parser
from cli.run_commands import spec_from_args
from inference.answer_methods import parse_letter
from inference.backends import make_scorer
from inference.plan import RunSpec
from inference.run_scoring import UNPARSED_MARK
from testbed.tiny_model import build_tiny_model
from tests.db_support import query_rows
from workflows.runs.execution import execute_run


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny_runs") / "tiny")


def test_the_registry_builds_the_scorer_of_each_method(tiny):
    from inference.backends.transformers.answers import (
        FullAnswerScorer,
        GenerateScorer,
        LetterProbScorer,
    )

    assert type(make_scorer("transformers", model=str(tiny))) is LetterProbScorer
    assert isinstance(make_scorer("transformers", model=str(tiny),
                                  answer_method="full-answer-prob"), FullAnswerScorer)
    generate = make_scorer("transformers", model=str(tiny), answer_method="generate",
                           temperature=0.0)
    assert isinstance(generate, GenerateScorer) and generate.temperature == 0.0
    with pytest.raises(ValueError, match="generate answer method only"):
        make_scorer("transformers", model=str(tiny), temperature=0.6)
    with pytest.raises(ValueError, match="unknown answer method"):
        make_scorer("transformers", model=str(tiny), answer_method="regex")


def _spec(tiny, **options) -> RunSpec:
    return RunSpec(model=str(tiny), backend="transformers", year=2023, areas=("MT",),
                   languages=("pt",), shots=(0,), n_shuffles=2, seed=3, model_name="tiny",
                   backend_options=options)


def test_a_generate_run_keeps_texts_and_leaves_unparsed_answers_out(demo_db, tmp_path, tiny,
                                                                    monkeypatch):
    # The tiny random model's replies are all unreadable, far above the publishing limit:
    # lifted here, where what is stored of unparsed answers is the point.
    monkeypatch.setattr("inference.run_scoring.NO_LETTER_LIMIT", 1.0)
    spec = _spec(tiny, answer_method="generate", temperature=0.6, max_new_tokens=4)
    assert execute_run(spec, demo_db, tmp_path / "runs", batch_items=45).status == "finished"
    rows = query_rows(demo_db, """SELECT choice, correct, answer_text FROM model_responses
                                  WHERE run_id = ?""", [spec.run_id])
    assert len(rows) == 45 * 2 and all(text is not None for _, _, text in rows)
    for choice, correct, text in rows:
        letter = parse_letter(text)
        if letter < 0:
            assert (choice, correct) == (UNPARSED_MARK, None)
        else:
            assert choice != UNPARSED_MARK and correct is not None
    unparsed = sum(choice == UNPARSED_MARK for choice, _, _ in rows)
    assert unparsed > 0, "a random tiny model should leave some answers unreadable"
    (options,) = query_rows(demo_db, "SELECT options FROM model_runs WHERE run_id = ?",
                            [spec.run_id])[0]
    recorded = json.loads(options)
    assert recorded["unparsed_answers"] == unparsed
    assert recorded["scorer"]["answer_method"] == "generate"
    label = query_rows(demo_db, "SELECT label FROM model_runs WHERE run_id = ?",
                       [spec.run_id])[0][0]
    assert label == "tiny · 0-shot · generate T=0.6 · 2 shuffles"
    patterns = dict(query_rows(demo_db, """SELECT shuffle, response_pattern FROM model_scores
                                           WHERE run_id = ?""", [spec.run_id]))
    answers = query_rows(demo_db, """SELECT shuffle, position, choice, correct
                                     FROM model_responses WHERE run_id = ?""", [spec.run_id])
    for shuffle, position, choice, correct in answers:
        mark = patterns[shuffle][position - 1]
        # An unparsed answer is no answer in its pattern, never a wrong one.
        assert mark == ("." if choice == UNPARSED_MARK else str(int(correct)))


def test_a_full_answer_run_records_its_method(demo_db, tmp_path, tiny):
    spec = _spec(tiny, answer_method="full-answer-prob")
    execute_run(spec, demo_db, tmp_path / "runs", batch_items=45)
    rows = query_rows(demo_db, """SELECT prob_a + prob_b + prob_c + prob_d + prob_e, choice,
                                         answer_text FROM model_responses WHERE run_id = ?""",
                      [spec.run_id])
    assert len(rows) == 90
    np.testing.assert_allclose([total for total, _, _ in rows], 1.0)
    assert all(choice in "ABCDE" and text is None for _, choice, text in rows)
    options = json.loads(query_rows(demo_db, "SELECT options FROM model_runs WHERE run_id = ?",
                                    [spec.run_id])[0][0])
    assert options["scorer"]["answer_method"] == "full-answer-prob"
    assert options["unparsed_answers"] == 0


def test_the_run_command_takes_an_answer_method(tiny):
    parser = build_parser()
    base = ["run", "--backend", "transformers", "--model", str(tiny), "--year", "2023"]
    spec = spec_from_args(parser.parse_args(base + ["--answer-method", "generate",
                                                    "--temperature", "0", "--max-new-tokens",
                                                    "8"]))
    assert spec.backend_options == {"answer_method": "generate", "temperature": 0.0,
                                    "max_new_tokens": 8}
    plain = spec_from_args(parser.parse_args(base))
    assert "answer_method" not in plain.backend_options  # letter-prob runs keep their ids
    with pytest.raises(UsageError, match="--temperature apply to --answer-method generate"):
        spec_from_args(parser.parse_args(base + ["--temperature", "0.6"]))
    with pytest.raises(UsageError, match="--answer-method applies to --backend transformers"):
        spec_from_args(parser.parse_args(["run", "--backend", "random", "--year", "2023",
                                          "--answer-method", "generate"]))
