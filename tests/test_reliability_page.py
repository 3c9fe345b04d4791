"""Test information's reliability table against the integral and the scores computed here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from store.connection import open_reader
from tests.page_support import assert_clean, run_page

PAGE = "pages/Test_information.py"


def _information(theta: float, items) -> float:
    """Test information of 3PL items (a, b, c) at θ, D = 1, written out."""
    total = 0.0
    for a, b, c in items:
        p = c + (1 - c) / (1 + math.exp(-a * (theta - b)))
        total += a * a * (p - c) ** 2 * (1 - p) / ((1 - c) ** 2 * p)
    return total


def test_marginal_and_empirical_reliability_of_the_booklets(models_db):
    app = run_page(PAGE)
    assert_clean(app)
    table = next(frame.value for frame in app.dataframe if "marginal" in frame.value.columns)
    assert len(table) == 4
    lc_language = int(app.radio(key="information.lc").value)  # the page's LC items
    con = open_reader(models_db)
    try:
        for row in table.sort_values("area").itertuples():
            # In LC the form is the booklet in the page's language: its takers only.
            language = (f"AND (item_language IS NULL OR item_language = {lc_language})"
                        if row.area == "LC" else "")
            theta, se = np.array(con.execute(
                "SELECT theta, theta_se FROM scores WHERE year = 2023 AND area = ? AND "
                f"booklet_id = ? AND NOT coalesce(blank, false) AND isfinite(theta) {language}",
                [row.area, row.booklet_id]).fetchall()).T
            items = con.execute(
                f"SELECT a, b, c FROM items WHERE year = 2023 AND booklet_id = ? AND position "
                f"IS NOT NULL AND a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL {language}",
                [row.booklet_id]).fetchall()
            variance, error = theta.var(ddof=1), float(np.mean(se ** 2))
            assert row.candidates == len(theta) and row.items == len(items)
            assert row.empirical == pytest.approx(variance / (variance + error), rel=1e-9)
            mean, sd = theta.mean(), math.sqrt(variance + error)
            assert row.theta_mean == pytest.approx(mean) and row.theta_sd == pytest.approx(sd)

            density = stats.norm(mean, sd)
            mass = density.cdf(6) - density.cdf(-6)
            error_variance = integrate.quad(
                lambda t, items=items, density=density: density.pdf(t) / _information(t, items),
                -6, 6, limit=200)[0] / mass
            assert row.marginal == pytest.approx(sd ** 2 / (sd ** 2 + error_variance),
                                                 rel=1e-5)
    finally:
        con.close()


def test_each_lc_language_form_counts_its_own_takers(models_db):
    """The English and Spanish takers of an LC booklet are two forms: each row counts one
    language's candidates, and the two add up to the booklet's."""
    app = run_page(PAGE)
    counted = {}
    for language in (0, 1):
        app.radio(key="information.lc").set_value(language).run()
        assert_clean(app)
        table = next(frame.value for frame in app.dataframe if "marginal" in frame.value.columns)
        row = table.set_index("area").loc["LC"]
        counted[language] = (int(row["booklet_id"]), int(row["candidates"]),
                             float(row["empirical"]))
    booklet = counted[0][0]
    assert counted[1][0] == booklet
    con = open_reader(models_db)
    try:
        by_language = dict(con.execute(
            "SELECT item_language, count(*) FROM scores WHERE year = 2023 AND area = 'LC' AND "
            "booklet_id = ? AND NOT coalesce(blank, false) AND isfinite(theta) "
            "GROUP BY item_language", [booklet]).fetchall())
    finally:
        con.close()
    assert {language: count for language, (_, count, _) in counted.items()} == by_language
    assert counted[0][2] != pytest.approx(counted[1][2], abs=1e-6)
