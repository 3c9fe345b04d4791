"""The Item explorer shows the humans' point-biserial of the item, as stored at ingest."""

from __future__ import annotations

import pytest

from store.connection import open_reader
from tests.page_support import assert_clean, run_page


def test_the_point_biserial_on_screen_is_the_stored_one(models_db):
    app = run_page("pages/Item_explorer.py")
    assert_clean(app)
    shown = {metric.label: metric.value for metric in app.metric}
    item_id = int(app.selectbox(key="explorer.item").value)
    con = open_reader(models_db)
    stored = con.execute("SELECT point_biserial FROM item_stats WHERE year = 2023 AND "
                         "item_id = ?", [item_id]).fetchone()[0]
    con.close()
    assert float(shown["Point-biserial"]) == pytest.approx(stored, abs=5e-4)
    assert 0 < stored < 1


def test_option_curves_are_the_shares_of_the_stored_marks_per_theta_bin(models_db):
    import json

    from tests.page_support import decoded

    app = run_page("pages/Item_explorer.py")
    assert_clean(app)
    item_id = int(app.selectbox(key="explorer.item").value)
    spec = next(json.loads(chart.proto.spec) for chart in app.get("plotly_chart")
                if (json.loads(chart.proto.spec)["layout"].get("meta") or {}).get("figure")
                == "option-curves")
    con = open_reader(models_db)
    rows = con.execute("SELECT theta_bin, option, sum(n) FROM option_theta_counts WHERE "
                       "year = 2023 AND item_id = ? GROUP BY ALL", [item_id]).fetchall()
    key = con.execute("SELECT any_value(key) FROM items WHERE year = 2023 AND item_id = ?",
                      [item_id]).fetchone()[0]
    con.close()
    by_bin: dict[float, dict[str, int]] = {}
    for low, option, n in rows:
        if option in "ABCDE":
            by_bin.setdefault(low, {})[option] = n
    lines = {trace["name"]: trace for trace in spec["data"] if trace["mode"] == "lines"}
    assert lines[f"humans: {key} (key)"]["line"]["dash"] == "solid"
    for name, trace in lines.items():
        letter = name.removeprefix("humans: ")[0]
        for theta, share in zip(decoded(trace["x"]), decoded(trace["y"]), strict=True):
            marks = by_bin[round(theta - 0.125, 6)]
            assert sum(marks.values()) >= 30
            assert share == pytest.approx(marks.get(letter, 0) / sum(marks.values()))
    diamonds = [trace for trace in spec["data"] if trace["mode"] == "markers"]
    assert diamonds, "the selected runs' choices"
