"""The trust verdict: four checks, each against an independent value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analytics.irt import ItemBank
from enem.scoring import DEFAULT_OPTIONS
from enem.trust import (
    INFORMATIVE_SE,
    SE_RATIO_LIMIT,
    humans_se_at,
    random_answer_theta,
    trust_verdict,
)
from store.catalogue_queries import loaded_years
from store.connection import open_reader
from store.human_queries import human_theta_se
from tests.page_support import assert_clean, run_page

BANK = ItemBank.from_arrays(np.linspace(0.8, 2.5, 45), np.linspace(-1.5, 2.5, 45),
                            np.full(45, 0.2))


def _exam_se_by_hand(theta: float, bank: ItemBank) -> float:
    """1/√Σ I_j(θ) with the 3PL item information D²a²·(Q/P)·((P − c)/(1 − c))²."""
    a, b, c, d = bank.a, bank.b, bank.c, bank.scaling
    p = c + (1 - c) / (1 + np.exp(-d * a * (theta - b)))
    information = d ** 2 * a ** 2 * ((1 - p) / p) * ((p - c) / (1 - c)) ** 2
    return float(1 / np.sqrt(information.sum()))


def test_each_check_against_its_definition():
    random_theta = random_answer_theta(BANK, DEFAULT_OPTIONS, n_patterns=500, seed=1)
    theta = np.array([1.0, 1.1, 0.9, 1.05])
    verdict = trust_verdict(theta, [0.30, 0.32, 0.28, 0.30], [0.1, -0.5, 0.3, 0.0],
                            human_p5_lz=-1.6, human_se=0.25, bank=BANK,
                            random_theta=random_theta)
    assert verdict.se_ratio == pytest.approx(0.30 / 0.25)
    assert verdict.exam_se == pytest.approx(_exam_se_by_hand(theta.mean(), BANK), rel=1e-12)
    assert verdict.fit.share_below == 0.0
    assert verdict.random_p < 1e-3 and verdict.above_random
    assert verdict.checks == {"person fit": True, "SE like humans'": True,
                              "informative band": verdict.exam_se <= INFORMATIVE_SE,
                              "not random": True}


def test_random_answering_is_not_trusted_even_when_it_fits():
    random_theta = random_answer_theta(BANK, DEFAULT_OPTIONS, n_patterns=2000, seed=1)
    # Another random answerer, 30 repetitions: its l_z is unremarkable, yet it is noise.
    other = random_answer_theta(BANK, DEFAULT_OPTIONS, n_patterns=30, seed=2)
    verdict = trust_verdict(other, np.full(30, 0.5), np.zeros(30), human_p5_lz=-1.6,
                            human_se=0.5, bank=BANK, random_theta=random_theta)
    assert verdict.checks["person fit"] is True
    assert verdict.checks["not random"] is False
    assert verdict.trusted is False and "not random" in verdict.words
    # Random answering sits near the guessing floor: its θ is low, as for a weak candidate.
    assert np.median(random_theta) < -0.5


def test_imprecise_or_uninformative_theta_fails_and_missing_checks_stay_undecided():
    random_theta = random_answer_theta(BANK, DEFAULT_OPTIONS, n_patterns=500, seed=1)
    imprecise = trust_verdict([1.0, 1.0], [0.5, 0.5], [0.0, 0.0], -1.6,
                              human_se=0.5 / (SE_RATIO_LIMIT + 0.01), bank=BANK,
                              random_theta=random_theta)
    assert imprecise.checks["SE like humans'"] is False and imprecise.trusted is False
    far = trust_verdict([3.9, 3.9], [0.5, 0.5], [0.0, 0.0], -1.6, 0.5, BANK, random_theta)
    assert _exam_se_by_hand(3.9, BANK) > INFORMATIVE_SE
    assert far.checks["informative band"] is False
    unknown = trust_verdict([1.0], [0.3], [0.0], float("nan"), float("nan"), None, [])
    assert set(unknown.checks.values()) == {None}
    assert unknown.trusted is None and unknown.words.startswith("undecided")


def test_humans_se_is_read_from_the_bin_holding_theta():
    table = pd.DataFrame({"theta_bin": [-0.2, -0.1, 0.0, 0.1], "mean_se": [0.4, 0.3, 0.2, 0.1]})
    assert humans_se_at(table, -0.05, 0.1) == 0.3
    assert humans_se_at(table, 0.0, 0.1) == 0.2
    assert humans_se_at(table, 0.1, 0.1) == 0.1  # exact edges belong to the bin above
    assert np.isnan(humans_se_at(table, 1.5, 0.1))


def test_person_fit_page_does_not_trust_random_runs_and_names_the_baseline(monkeypatch,
                                                                            pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = run_page("pages/Person_fit.py")
    assert_clean(app)
    table = app.dataframe[0].value.set_index(["model", "area"])
    # A simulated model that guesses (backend 'fixture') is checked like any model and fails.
    verdicts = table.loc["test-random-baseline", "theta_trusted"]
    assert verdicts.str.startswith("no").all() and verdicts.str.contains("not random").all()
    # The random baseline (backend 'random') is no model: its verdict says what it is, in
    # every area, while its measures are still shown.
    baseline = table.loc["random-baseline · 0-shot · 30 shuffles"]
    assert len(baseline) == 4
    assert (baseline["theta_trusted"] == "baseline: random answers, not a model").all()
    assert baseline["mean_theta"].notna().all() and baseline["random_p"].notna().all()
    models = table.drop(index="random-baseline · 0-shot · 30 shuffles", level="model")
    assert not models["theta_trusted"].str.startswith("baseline").any()
    assert table.loc["test-odd-base", "theta_trusted"].str.contains("person fit").all()
    captions = " ".join(c.value for c in app.caption)
    assert "Mann–Whitney" in captions
    assert "'baseline: random answers, not a model': a random-choice baseline run" in captions


def test_humans_mean_se_per_bin_equals_the_candidates_own(pages_demo_db):
    con = open_reader(pages_demo_db)
    year = loaded_years(con)[-1]
    stored = human_theta_se(con, year, "MT", None, "all", "all").set_index("theta_bin")
    raw = con.execute(
        """SELECT round(floor(theta / 0.1) * 0.1, 6) AS theta_bin, count(*) AS n,
                  avg(theta_se) AS mean_se
           FROM scores WHERE year = ? AND area = 'MT' AND NOT isnan(theta)
           GROUP BY ALL ORDER BY theta_bin""", [year]).df().set_index("theta_bin")
    con.close()
    assert stored["n"].tolist() == raw["n"].tolist()
    np.testing.assert_allclose(stored["mean_se"], raw["mean_se"], rtol=1e-12)
