"""l_z* on the Person fit page: the humans' (θ, l_z*) histogram stored at ingest
(``agg_theta_lz_star``) against the candidates' own ``scores.lz_star``, the page's switch (kept in
the URL) drawing the runs' stored l_z* and the humans' 5th percentile of l_z*, and a store made
before the table existed falling back to l_z with a note."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from dashboard.figures import LZ_STAR_TITLE, LZ_TITLE
from dashboard.summaries import histogram_quantile
from store.connection import open_reader, writing
from store.human_queries import human_theta_lz, lz_star_missing
from store.layout import copy_store
from store.model_queries import model_points
from tests.page_support import assert_clean, charts, decoded, messages, run_page
from workflows.views import shots_from_url

PAGE = "pages/Person_fit.py"
AREA = "MT"


def _raw_bins(con: duckdb.DuckDBPyConnection, year: int, area: str, column: str,
              state: str | None = None, answered_only: bool = False) -> pd.DataFrame:
    """(θ bin, statistic bin) counts from the candidates' own score rows (of one ``state``;
    without the all-blank tests), binned here with numpy (0.1 wide, lower edges; the
    statistic clipped to [−10, 4.95] as the docs say)."""
    rows = con.execute(
        f"""SELECT theta, {column} AS value FROM scores
            WHERE year = ? AND area = ? AND NOT isnan({column})
              AND (? IS NULL OR state = ?) AND NOT (? AND coalesce(blank, false))""",
        [year, area, state, state, answered_only]).df()
    theta_bin = np.round(np.floor(rows["theta"] / 0.1) * 0.1, 6)
    value_bin = np.round(np.floor(rows["value"].clip(-10.0, 4.95) / 0.1) * 0.1, 6)
    return (pd.DataFrame({"theta_bin": theta_bin, "lz_bin": value_bin})
            .value_counts().rename("n").reset_index()
            .sort_values(["theta_bin", "lz_bin"]).reset_index(drop=True))


def _as_bins(frame: pd.DataFrame) -> pd.DataFrame:
    return (frame.assign(theta_bin=frame["theta_bin"].round(6), lz_bin=frame["lz_bin"].round(6),
                         n=frame["n"].astype("int64"))
            .sort_values(["theta_bin", "lz_bin"]).reset_index(drop=True))


@pytest.mark.parametrize("area", ["CN", "MT"])
def test_the_lz_star_histogram_counts_the_candidates_lz_star(ingested_2023, area):
    con = open_reader(ingested_2023[0])
    try:
        stored = human_theta_lz(con, 2023, area, None, "all", "all", statistic="lz_star")
        expected = _raw_bins(con, 2023, area, "lz_star")
        pd.testing.assert_frame_equal(_as_bins(stored), expected, check_dtype=False)
        # It is not the l_z histogram under another name.
        assert not _as_bins(human_theta_lz(con, 2023, area, None, "all", "all")).equals(
            _as_bins(stored))
        # A subgroup and the all-blank switch narrow it as they narrow the candidates' rows.
        state = con.execute("SELECT state FROM scores WHERE area = ? GROUP BY state "
                            "ORDER BY count(*) DESC LIMIT 1", [area]).fetchone()[0]
        answered = human_theta_lz(con, 2023, area, None, "state", state, (), False,
                                    statistic="lz_star")
        expected = _raw_bins(con, 2023, area, "lz_star", state, answered_only=True)
        pd.testing.assert_frame_equal(_as_bins(answered), expected, check_dtype=False)
        assert not lz_star_missing(con, 2023)
    finally:
        con.close()


def test_an_unknown_statistic_is_refused(ingested_2023):
    con = open_reader(ingested_2023[0])
    try:
        for statistic in ("ctt", "agg_theta_lz; DROP TABLE scores", "LZ"):
            with pytest.raises(ValueError, match="person-fit statistic"):
                human_theta_lz(con, 2023, "MT", None, "all", "all", statistic=statistic)
    finally:
        con.close()


def test_a_store_without_the_lz_star_histogram_is_told_apart(tmp_path, ingested_2023):
    emptied, dropped = tmp_path / "emptied.duckdb", tmp_path / "dropped.duckdb"
    for path, statement in ((emptied, "DELETE FROM agg_theta_lz_star"),
                            (dropped, "DROP TABLE agg_theta_lz_star")):
        copy_store(ingested_2023[0], path)
        with writing(path, year=2023) as con:
            con.execute(statement)
        with open_reader(path) as con:
            assert lz_star_missing(con, 2023)
            assert not lz_star_missing(con, 1999)  # no humans at all: nothing to miss
            stored = human_theta_lz(con, 2023, "MT", None, "all", "all", statistic="lz_star")
            assert stored.empty and list(stored.columns) == ["theta_bin", "lz_bin", "n"]
            assert len(human_theta_lz(con, 2023, "MT", None, "all", "all"))


def _markers(figure: dict) -> dict[str, np.ndarray]:
    """The model markers of the Person fit figure: series → y values."""
    return {trace["name"]: decoded(trace["y"]) for trace in figure["data"]
            if trace.get("type") == "scatter" and trace.get("mode") == "markers"
            and "all-blank" not in trace["name"]}


def _p5_line(figure: dict) -> float:
    [shape] = [s for s in figure["layout"]["shapes"] if s["y0"] == s["y1"]]
    return float(shape["y0"])


def _expected(db, app, column: str) -> tuple[dict[str, np.ndarray], float, float]:
    """The page's runs' stored ``column`` per series (the selection the page's URL names),
    the humans' 5th percentile of ``column`` from their own score rows' histogram, and the
    raw 5th percentile (no binning)."""
    series = list(app.dataframe[0].value["model"].unique())
    params = app.query_params
    con = open_reader(db)
    try:
        points = model_points(con, 2023, AREA, None, params["lang"],
                                shots_from_url(params["shots"]), series)
        raw = con.execute(f"SELECT {column} FROM scores WHERE year = 2023 AND area = ? "
                          f"AND NOT isnan({column})", [AREA]).df()[column].to_numpy()
        marginal = _raw_bins(con, 2023, AREA, column).groupby("lz_bin", as_index=False)["n"].sum()
    finally:
        con.close()
    values = {name: group[column].to_numpy(float) for name, group in points.groupby("model")}
    return (values, histogram_quantile(marginal["lz_bin"], marginal["n"], 0.1, 0.05),
            float(np.quantile(raw, 0.05)))


def _assert_draws(app, db, column: str, title: str) -> None:
    figure = charts(app)[0]
    assert figure["layout"]["yaxis"]["title"]["text"] == title
    values, p5, raw_p5 = _expected(db, app, column)
    drawn = _markers(figure)
    assert set(drawn) == set(values) and drawn
    for name, y in drawn.items():
        np.testing.assert_allclose(np.sort(y), np.sort(values[name]), rtol=1e-12, atol=0)
    assert _p5_line(figure) == pytest.approx(p5, abs=1e-12)
    assert abs(p5 - raw_p5) <= 0.1  # exact to one bin width
    reference = charts(app)[1]
    assert any(axis.get("title", {}).get("text") == title
               for name, axis in reference["layout"].items() if name.startswith("xaxis"))


def test_the_switch_draws_the_runs_and_humans_lz_star(models_db):
    app = run_page(PAGE, {"area": AREA, "statistic": "lz_star"})
    assert_clean(app)
    assert app.segmented_control(key="fit.statistic").value == "lz_star"
    _assert_draws(app, models_db, "lz_star", LZ_STAR_TITLE)
    # The humans' two percentiles differ, so the line check above tells them apart.
    assert _expected(models_db, app, "lz")[1] != pytest.approx(
        _expected(models_db, app, "lz_star")[1], abs=1e-6)
    captions = " ".join(c.value for c in app.caption)
    assert "Snijders 2001" in captions and "person-fit check uses l_z" in captions
    assert "ingest the year again" not in messages(app).lower()
    # Switching back to l_z draws l_z and writes it to the URL.
    app.segmented_control(key="fit.statistic").set_value("lz").run()
    assert_clean(app)
    assert app.query_params["statistic"] == "lz"
    _assert_draws(app, models_db, "lz", LZ_TITLE)
    assert "person-fit check uses l_z" not in " ".join(c.value for c in app.caption)


def test_the_trust_table_stays_on_lz(models_db):
    on_lz = run_page(PAGE, {"area": AREA}).dataframe[0].value
    on_star = run_page(PAGE, {"area": AREA, "statistic": "lz_star"}).dataframe[0].value
    pd.testing.assert_frame_equal(on_lz, on_star)


def test_an_older_store_says_to_ingest_again_and_draws_lz(monkeypatch, tmp_path,
                                                          pages_models_db):
    db = tmp_path / "older.duckdb"
    copy_store(pages_models_db, db)
    with writing(db, year=2023) as con:
        con.execute("DELETE FROM agg_theta_lz_star")
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(PAGE, {"area": AREA, "statistic": "lz_star"})
    assert_clean(app)
    assert "ingest the year again" in messages(app).lower()
    _assert_draws(app, db, "lz", LZ_TITLE)
