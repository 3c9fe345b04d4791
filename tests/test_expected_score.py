"""Accuracy vs ability draws each area's test characteristic curve: the expected number correct
of the booklet's counted items, checked against the 3PL written out here and against the
candidates' own CTT scores near each θ."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dashboard.expected_score import CURVE_NAME
from store.connection import open_reader
from tests.page_support import assert_clean, decoded, run_page

PAGE = "pages/Accuracy_vs_ability.py"


def _curves(app) -> list[dict]:
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    return [trace for trace in spec["data"] if trace.get("legendgroup") == "expected-score"]


def test_the_curve_is_the_sum_of_the_items_probabilities_and_follows_the_candidates(models_db):
    app = run_page(PAGE, {"area": "MT"})
    assert_clean(app)
    curves = _curves(app)
    assert len(curves) == 1 and curves[0]["name"] == CURVE_NAME
    booklet = int(curves[0]["hovertemplate"].split(":")[0].removeprefix("booklet "))
    theta, expected = decoded(curves[0]["x"]), decoded(curves[0]["y"])
    con = open_reader(models_db)
    try:
        items = con.execute(
            "SELECT a, b, c FROM items WHERE year = 2023 AND booklet_id = ? AND position IS "
            "NOT NULL AND a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL", [booklet]).fetchall()
        cells = con.execute(
            "SELECT theta_bin, ctt, sum(n) FROM agg_theta_ctt WHERE year = 2023 AND area = 'MT' "
            "AND booklet_id = ? AND group_kind = 'all' AND NOT blank GROUP BY ALL",
            [booklet]).fetchall()
    finally:
        con.close()
    for index in (0, 150, 200, 260, len(theta) - 1):
        by_hand = sum(c + (1 - c) / (1 + math.exp(-a * (theta[index] - b)))
                      for a, b, c in items)
        assert expected[index] == pytest.approx(by_hand, rel=1e-9)
    # the candidates of the booklet: mean CTT in a 0.1-wide θ bin lies near the curve there
    # (EAP θ is shrunk towards the mean, so only near the middle of the scale, within 1.5 items)
    for low in (-0.5, 0.0, 0.5):
        rows = [(ctt, n) for bin_low, ctt, n in cells if abs(bin_low - low) < 1e-9]
        mean_ctt = sum(ctt * n for ctt, n in rows) / sum(n for _, n in rows)
        at = np.argmin(np.abs(theta - (low + 0.05)))
        assert abs(mean_ctt - expected[at]) < 1.5
