"""TEST DATA ONLY: synthetic "model runs" inserted into a copy of a demo database.

The dashboard tests and ``bench.pages`` need rows in ``models``, ``model_runs``,
``model_responses`` and ``model_scores`` beyond the demo's own runs. This helper simulates a few
fake models from the stored item parameters with numpy and scores every simulated pattern with
the project's own analytics (EAP, l_z, l_z*, CTT, nota), exactly as a real run would be scored.
Every model id starts with ``test-`` and every run is marked ``origin='test-fixture'``; nothing
here is shipped in the demo.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from analytics import ItemBank, enem_nota, probability, score_responses
from enem.areas import OPTION_LETTERS as LETTERS
from inference.protocol import SHOT_SETTINGS
from store.connection import writing
from store.layout import copy_store


@dataclass(frozen=True)
class FakeModel:
    """A simulated model: its ability, and how it departs from a human response process.

    ``aberrance`` in [0, 1] mixes the 3PL probability with its reverse in difficulty (hard items
    easier than easy ones), which gives the low person fit the paper found for some LLMs;
    ``guess_only`` answers every item right with probability 1/5 (a random-choice baseline).
    """

    model_id: str
    family: str
    size: str
    instruction_tuned: bool
    theta: float
    aberrance: float = 0.0
    english_bonus: float = 0.0
    guess_only: bool = False


TEST_MODELS: tuple[FakeModel, ...] = (
    FakeModel("test-strong-it", "testfam-alpha", "7B", True, theta=1.6, english_bonus=0.3),
    FakeModel("test-odd-base", "testfam-beta", "1B", False, theta=0.2, aberrance=0.7),
    FakeModel("test-random-baseline", "baseline", "-", False, theta=0.0, guess_only=True),
)


def _forms(con: duckdb.DuckDBPyConnection, year: int) -> dict[str, pd.DataFrame]:
    """For each area, the items (string order) of its first booklet; LC with Spanish items."""
    forms = {}
    booklets = con.execute(
        "SELECT area, min(booklet_id) FROM booklets WHERE year = ? AND valid GROUP BY area",
        [year]).fetchall()
    for area, booklet in booklets:
        forms[area] = con.execute(
            """SELECT booklet_id, item_language, co_posicao, item_id, key, a, b, c
               FROM items WHERE year = ? AND booklet_id = ?
                 AND (item_language IS NULL OR item_language = 1)
               ORDER BY co_posicao""",
            [year, booklet]).df()
    return forms


def _simulate_pattern(rng: np.random.Generator, model: FakeModel, theta: float,
                      form: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(correct 0/1, chosen letter index, letter probabilities (n, 5)) for one shuffle."""
    a = form["a"].to_numpy(float)
    b = form["b"].to_numpy(float)
    c = form["c"].to_numpy(float)
    usable = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    bank_b = np.where(usable, b, 0.0)
    reversed_b = np.where(usable, np.nanmean(b) * 2 - bank_b, 0.0)
    bank = ItemBank.from_arrays(np.where(usable, a, 1.0), bank_b, np.where(usable, c, 0.2))
    reverse = ItemBank.from_arrays(np.where(usable, a, 1.0), reversed_b, np.where(usable, c, 0.2))
    p = ((1 - model.aberrance) * probability([theta], bank)[0]
         + model.aberrance * probability([theta], reverse)[0])
    if model.guess_only:
        p = np.full(len(form), 0.2)
    correct = rng.random(len(form)) < p
    keys = np.array([LETTERS.index(k) if k in LETTERS else 0 for k in form["key"]])
    choice = np.where(correct, keys, (keys + rng.integers(1, 5, len(form))) % 5)
    logits = rng.normal(0.0, 1.0, (len(form), 5))
    logits[np.arange(len(form)), choice] += 3.0
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return correct.astype(float), choice, probs


def add_test_model_runs(
    db_path: Path, year: int = 2023, shuffles: int = 8, seed: int = 1,
    models: tuple[FakeModel, ...] = TEST_MODELS, languages: tuple[str, ...] = ("pt", "en"),
    shots: tuple[int, ...] = SHOT_SETTINGS,
) -> pd.DataFrame:
    """Insert synthetic runs of ``models`` into ``db_path``; returns the model_scores rows."""
    rng = np.random.default_rng(seed)
    with writing(db_path) as con:
        forms = _forms(con, year)
        score_rows, response_rows = [], []
        for model in models:
            run_id = f"{model.model_id}-{year}-fixture"
            con.execute("INSERT OR REPLACE INTO models VALUES (?, ?, ?, ?, ?)",
                        [model.model_id, model.family, model.size, model.instruction_tuned,
                         "synthetic test fixture, not a real model"])
            con.execute(
                """INSERT OR REPLACE INTO model_runs
                   (run_id, model_id, backend, origin, year, areas, languages, shots, n_shuffles,
                    seed, status, created_at, finished_at, error, options, years, repetition,
                    label)
                   VALUES (?, ?, 'fixture', 'test-fixture', ?, ?, ?, ?, ?, ?, 'finished', ?, ?,
                           NULL, '{}', CAST(? AS VARCHAR), 'shuffle', ?)""",
                [run_id, model.model_id, year, ",".join(sorted(forms)), ",".join(languages),
                 ",".join(map(str, shots)), shuffles, seed, datetime(2026, 1, 1),
                 datetime(2026, 1, 1, 1), year, model.model_id])
            for area, form in forms.items():
                usable = form["a"].notna().to_numpy()
                bank = ItemBank.from_arrays(form["a"], form["b"], form["c"])
                for language in languages:
                    for shot in shots:
                        theta = model.theta + (model.english_bonus if language == "en" else 0.0)
                        theta += 0.1 * shot / 4
                        patterns = []
                        for shuffle in range(shuffles):
                            correct, choice, probs = _simulate_pattern(rng, model, theta, form)
                            patterns.append(correct)
                            response_rows.append(pd.DataFrame({
                                "run_id": run_id, "year": year, "area": area,
                                "booklet_id": form["booklet_id"].astype("int32"),
                                "item_language": form["item_language"],
                                "position": np.arange(1, len(form) + 1, dtype=np.int16),
                                "item_id": form["item_id"], "prompt_language": language,
                                "shots": np.int16(shot), "shuffle": np.int32(shuffle),
                                "permutation": "".join(rng.permutation(list(LETTERS))),
                                "prob_a": probs[:, 0], "prob_b": probs[:, 1],
                                "prob_c": probs[:, 2], "prob_d": probs[:, 3],
                                "prob_e": probs[:, 4], "letter_mass": 1.0,
                                "choice": [LETTERS[i] for i in choice],
                                "correct": correct.astype(bool),
                            }))
                        matrix = np.array(patterns)
                        scores = score_responses(matrix, bank)
                        score_rows.append(pd.DataFrame({
                            "run_id": run_id, "year": year, "area": area,
                            "booklet_id": int(form["booklet_id"].iloc[0]),
                            "item_language": form["item_language"].dropna().iloc[0]
                            if form["item_language"].notna().any() else None,
                            "prompt_language": language, "shots": shot,
                            "shuffle": np.arange(shuffles),
                            "response_pattern": ["".join(str(int(v)) for v in row[usable])
                                                 for row in matrix],
                            "theta": scores.theta, "theta_se": scores.theta_se,
                            "lz": scores.lz, "lz_star": scores.lz_star,
                            "ctt": scores.ctt.astype(int), "n_scored": scores.n_scored,
                            "nota": enem_nota(scores.theta, area),
                        }))
        scored = pd.concat(score_rows, ignore_index=True)
        con.register("fixture_responses", pd.concat(response_rows, ignore_index=True))
        con.register("fixture_scores", scored)
        con.execute("INSERT INTO model_responses BY NAME SELECT * FROM fixture_responses")
        con.execute("INSERT INTO model_scores BY NAME SELECT * FROM fixture_scores")
    return scored


def copy_with_test_runs(source: Path, target: Path, **options) -> Path:
    """Copy a demo database and add the synthetic test runs to the copy; returns ``target``."""
    copy_store(source, target)
    add_test_model_runs(target, **options)
    return target
