"""Model runs: the plan, publishing into the store, resume after a kill, cancel, locking."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from inference.backends import make_scorer
from inference.plan import RunSpec, build_plan
from inference.prompts import build_request
from inference.shuffles import option_permutations, to_original_probs
from store.connection import connected, writing
from store.layout import copy_store
from store.model_runs import ExamReader
from testbed.tiny_model import build_tiny_model
from tests.db_support import query_rows
from tests.oracle_support import slow_eap
from workflows.runs.execution import execute_run
from workflows.runs.folder import RunBusyError, RunFolder

ROOT = Path(__file__).resolve().parent.parent


def _spec() -> RunSpec:
    return RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT", "LC"),
                   languages=("pt", "en"), shots=(0,), n_shuffles=5, seed=3)


def test_random_run_is_published_and_scored_like_humans(demo_db, tmp_path):
    spec = _spec()
    outcome = execute_run(spec, demo_db, tmp_path / "runs")
    assert outcome.status == "finished" and outcome.units_done == outcome.units_total == 2 * 2 * 45
    n_patterns = query_rows(demo_db, "SELECT count(*) FROM model_scores WHERE run_id = ?",
                       [spec.run_id])[0][0]
    assert n_patterns == 2 * 2 * 5
    n_responses = query_rows(demo_db, "SELECT count(*) FROM model_responses")[0][0]
    assert n_responses == 2 * 2 * 45 * 5
    # Every stored θ equals a slow EAP of its stored 0/1 pattern with the booklet's parameters.
    items = query_rows(demo_db, """SELECT position, a, b, c FROM items
                              WHERE booklet_id = (SELECT booklet_id FROM model_scores
                                                  WHERE area = 'MT' LIMIT 1)
                              ORDER BY position""")
    params = [None if a is None else (a, b, c) for _, a, b, c in items]
    for pattern, theta, se, ctt in query_rows(
            demo_db, "SELECT response_pattern, theta, theta_se, ctt FROM model_scores "
                     "WHERE area = 'MT'"):
        values = [None if ch == "." else float(ch) for ch in pattern]
        expected_theta, expected_se = slow_eap(values, params)
        assert theta == pytest.approx(expected_theta, abs=1e-9)
        assert se == pytest.approx(expected_se, abs=1e-9)
        assert ctt == sum(v == 1 for v, p in zip(values, params, strict=True) if p is not None)
    # Choices are original letters; correctness agrees with the items' keys.
    wrong = query_rows(demo_db, """SELECT count(*) FROM model_responses r JOIN items i
                             ON i.year = r.year AND i.booklet_id = r.booklet_id
                             AND i.position = r.position
                             AND (i.item_language IS NULL OR i.item_language = r.item_language)
                             WHERE (r.choice = i.key) <> r.correct""")[0][0]
    assert wrong == 0
    # Probabilities are stored in original-letter order: the chosen letter has the largest one.
    probs = query_rows(demo_db, "SELECT prob_a, prob_b, prob_c, prob_d, prob_e, choice "
                           "FROM model_responses LIMIT 200")
    for *p, choice in probs:
        assert "ABCDE"[int(np.argmax(p))] == choice


def test_second_process_cannot_work_on_the_same_run(demo_db, tmp_path):
    spec = _spec()
    folder = RunFolder(tmp_path / "runs" / spec.run_id)
    folder.acquire()
    try:
        with pytest.raises(RunBusyError):
            execute_run(spec, demo_db, tmp_path / "runs")
    finally:
        folder.release()


def _start_run(db, runs_dir, *extra):
    return subprocess.Popen(
        [sys.executable, "-m", "cli", "run", "--db", str(db), "--runs-dir",
         str(runs_dir), "--backend", "random", "--year", "2023", "--areas", "MT", "LC",
         "--languages", "pt", "en", "--shuffles", "5", "--seed", "3", "--batch-items", "1",
         "--quiet", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_parts(parts: Path, at_least: int, process, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if parts.exists() and len(list(parts.glob("*.parquet"))) >= at_least:
            return
        if process.poll() is not None:
            raise AssertionError(f"run ended early: {process.stderr.read().decode()}")
        time.sleep(0.005)
    raise AssertionError("no parts appeared")


def test_killed_run_resumes_without_duplicates(demo_db, tmp_path):
    runs = tmp_path / "runs"
    spec = _spec()
    parts = runs / spec.run_id / "parts"
    process = _start_run(demo_db, runs)
    _wait_for_parts(parts, 5, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_parts = len(list(parts.glob("*.parquet")))
    assert 5 <= killed_parts < 180
    assert query_rows(demo_db, "SELECT count(*) FROM model_scores")[0][0] == 0
    rerun = _start_run(demo_db, runs)
    assert rerun.wait(timeout=120) == 0, rerun.stderr.read().decode()
    assert len(list(parts.glob("*.parquet"))) == 180
    duplicates = query_rows(demo_db, """SELECT count(*) FROM (
        SELECT area, prompt_language, shots, position, shuffle, count(*) AS n
        FROM model_responses GROUP BY ALL HAVING n > 1)""")[0][0]
    assert duplicates == 0
    resumed = query_rows(demo_db, "SELECT area, prompt_language, shuffle, theta FROM model_scores "
                             "ORDER BY ALL")
    # The same run done in one go gives identical results.
    fresh_db = tmp_path / "fresh.duckdb"
    copy_store(demo_db, fresh_db)
    with writing(fresh_db) as con:
        for table in ("model_scores", "model_responses", "model_runs"):
            con.execute(f"DELETE FROM {table}")
    execute_run(spec, fresh_db, tmp_path / "fresh-runs")
    assert query_rows(fresh_db, "SELECT area, prompt_language, shuffle, theta FROM model_scores "
                           "ORDER BY ALL") == resumed


def test_sigterm_cancels_after_the_batch_and_can_resume(demo_db, tmp_path):
    runs = tmp_path / "runs"
    spec = _spec()
    process = _start_run(demo_db, runs)
    _wait_for_parts(runs / spec.run_id / "parts", 3, process)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 130
    status = RunFolder(runs / spec.run_id).read_json("status.json")
    assert status["status"] == "cancelled"
    assert status["units_done"] < status["units_total"]
    assert not RunFolder(runs / spec.run_id).is_locked()
    assert _start_run(demo_db, runs).wait(timeout=120) == 0
    status = RunFolder(runs / spec.run_id).read_json("status.json")
    assert status["status"] == "finished" and status["units_done"] == status["units_total"]


def test_prompt_command_prints_the_exact_prompt(demo_db):
    result = subprocess.run(
        [sys.executable, "-m", "cli", "prompt", "--db", str(demo_db), "--year", "2023",
         "--area", "MT", "--position", "1", "--language", "en", "--shots", "1"],
        cwd=ROOT, capture_output=True, text=True, check=True)
    text = result.stdout
    assert text.startswith("Here are some questions from a college entrance exam.")
    assert text.count("Question:") == 2 and text.rstrip("\n").endswith("Answer: (")
    # One solved example (the easiest MT item, with its key) then the asked item, unanswered.
    assert text.split("Question:")[1].rstrip().endswith(")")


def test_tiny_transformers_run_stores_probabilities_and_min_k(demo_db, tmp_path):
    folder = build_tiny_model(tmp_path / "tiny")
    spec = RunSpec(model=str(folder), backend="transformers", year=2023, areas=("MT",),
                   languages=("en",), shots=(1,), n_shuffles=3, seed=4, model_name="tiny")
    execute_run(spec, demo_db, tmp_path / "runs", batch_items=9)
    stored = query_rows(demo_db, """
        SELECT position, shuffle, prob_a, prob_b, prob_c, prob_d, prob_e, letter_mass
        FROM model_responses ORDER BY position, shuffle""")
    assert len(stored) == 45 * 3
    # Recompute one item independently with the plain (one prompt per forward pass) path.
    with connected(demo_db, read_only=True) as con:
        plan = build_plan(ExamReader(con), spec)
    unit = plan.units[7]
    perms = option_permutations(3, spec.seed, item_key=unit.item_id)
    plain = make_scorer("transformers", model=str(folder), mode="plain")
    result = plain.score([build_request(unit.question, unit.shot_examples, perms)])[0]
    expected = to_original_probs(result.probs, perms)
    got = np.array([row[2:7] for row in stored if row[0] == unit.position])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose([row[7] for row in stored if row[0] == unit.position],
                               result.letter_mass, atol=1e-5)
    min_k = dict(query_rows(demo_db,
                            "SELECT item_id, value FROM min_k_prob WHERE model_id = 'tiny'"))
    assert len(min_k) == 45
    direct = plain.min_k_percent_prob([unit.question.stem])[0]
    assert min_k[unit.item_id] == pytest.approx(direct, abs=1e-6)


def test_two_runs_at_once_both_land(demo_db, tmp_path):
    runs = tmp_path / "runs"
    first = _start_run(demo_db, runs)
    second = _start_run(demo_db, runs, "--seed", "8")
    assert first.wait(timeout=180) == 0, first.stderr.read().decode()
    assert second.wait(timeout=180) == 0, second.stderr.read().decode()
    seeds = query_rows(demo_db, "SELECT seed, count(*) FROM model_runs r JOIN model_scores s "
                           "USING (run_id) GROUP BY seed ORDER BY seed")
    assert seeds == [(3, 20), (8, 20)]


def test_plan_records_where_the_shot_examples_came_from(demo_db):
    zero_shot = _spec()
    four_shot = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",),
                        languages=("en",), shots=(4,), n_shuffles=2, seed=3)
    with connected(demo_db, read_only=True) as con:
        assert build_plan(ExamReader(con), zero_shot).shots_source.startswith("no shots")
        plan = build_plan(ExamReader(con), four_shot)
    # The fixture holds one exam only, so the examples fall back to its own easiest items,
    # and never to the item being asked.
    assert plan.shots_source.startswith("same exam")
    for unit in plan.units:
        assert len(unit.shot_examples) == 4
        assert all(example.item_id != unit.item_id for example in unit.shot_examples)


def test_two_runs_with_the_same_settings_are_never_pooled(demo_db, tmp_path):
    """The demo holds a 30-shuffle random run; two more with equal settings and other seeds
    each get their own label (the series pages compare), and re-publishing keeps it."""
    first = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",),
                    languages=("pt",), shots=(0,), n_shuffles=3, seed=11)
    second = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",),
                     languages=("pt",), shots=(0,), n_shuffles=3, seed=12)
    for spec in (first, second):
        assert execute_run(spec, demo_db, tmp_path / "runs").status == "finished"
    labels = dict(query_rows(demo_db, "SELECT run_id, label FROM model_runs"))
    assert len(set(labels.values())) == len(labels)
    assert labels[first.run_id] == "random-baseline · 0-shot · 3 shuffles"
    assert labels[second.run_id] == "random-baseline · 0-shot · 3 shuffles · seed 12"
    assert execute_run(first, demo_db, tmp_path / "again").status == "finished"
    assert query_rows(demo_db, "SELECT label FROM model_runs WHERE run_id = ?",
                      [first.run_id])[0][0] == labels[first.run_id]
