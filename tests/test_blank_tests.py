"""The switch that leaves all-blank tests out of the human reference (sidebar, URL ``blank=out``).

Counts are checked against the candidates' own rows in ``scores``, not against the histograms
they are read from.
"""

from __future__ import annotations

import numpy as np

from store.catalogue_queries import loaded_years
from store.connection import open_reader
from store.human_queries import blank_tests, human_theta_ctt, human_theta_lz
from tests.page_support import assert_clean, charts, decoded, run_page


def _raw_counts(path) -> dict[str, tuple[int, int]]:
    """Per area: (all-blank tests, every candidate with a θ), counted from ``scores`` rows."""
    con = open_reader(path)
    rows = con.execute(
        """SELECT area, count(*) FILTER (WHERE blank), count(*) FROM scores
           WHERE NOT isnan(theta) GROUP BY area""").fetchall()
    con.close()
    return {area: (int(blank), int(total)) for area, blank, total in rows}


def test_histograms_hold_the_blank_tests_apart(pages_demo_db):
    raw = _raw_counts(pages_demo_db)
    con = open_reader(pages_demo_db)
    year = loaded_years(con)[-1]
    counted = blank_tests(con, year).set_index("area")
    assert all(raw[area][0] > 0 for area in raw), "the demo should hold some blank tests"
    for area, (blank, total) in raw.items():
        assert int(counted.loc[area, "blank"]) == blank
        assert int(counted.loc[area, "candidates"]) == total
        everyone = human_theta_ctt(con, year, area, None, "all", "all")
        answered = human_theta_ctt(con, year, area, None, "all", "all", (), False)
        assert int(everyone["n"].sum()) == total
        assert int(answered["n"].sum()) == total - blank
        # Every left-out test has no correct answer: the difference sits at CTT 0 only.
        merged = everyone.merge(answered, on=["theta_bin", "ctt"], how="left",
                                suffixes=("", "_answered")).fillna(0)
        gone = merged[merged["n"] != merged["n_answered"]]
        assert set(gone["ctt"]) == {0}
        lz = human_theta_lz(con, year, area, None, "state", "SP", (), False)
        lz_all = human_theta_lz(con, year, area, None, "state", "SP")
        assert int(lz["n"].sum()) <= int(lz_all["n"].sum())
    con.close()


def _humans_total(app) -> float:
    heatmaps = [t for t in charts(app)[0]["data"] if t.get("type") == "heatmap"]
    return float(sum(np.nansum(decoded(t["customdata"])) for t in heatmaps))


def test_sidebar_switch_and_url_leave_blank_tests_out(monkeypatch, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    raw = _raw_counts(pages_models_db)
    app = run_page("pages/Accuracy_vs_ability.py")
    assert_clean(app)
    everyone = _humans_total(app)
    assert everyone == sum(total for _, total in raw.values())
    app.sidebar.toggle(key="sidebar.blank").set_value(True).run()
    assert_clean(app)
    assert _humans_total(app) == sum(total - blank for blank, total in raw.values())
    assert app.query_params["blank"] == "out"
    assert any("all-blank tests left out" in c.value for c in app.caption)

    shared = run_page("pages/Accuracy_vs_ability.py", query={"blank": "out"})
    assert_clean(shared)
    assert shared.sidebar.toggle(key="sidebar.blank").value is True
    assert _humans_total(shared) == sum(total - blank for blank, total in raw.values())
