"""The Populations page under AppTest (through the app's frame, as a browser opens it) and the
dashboard helpers behind it, on the page fixtures' demo databases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analytics.ability import MLEstimator
from analytics.irt import ItemBank
from analytics.populations import pool_inverse_variance
from dashboard.populations.models import (
    ml_rescored,
    model_summaries,
    variant_estimates,
)
from dashboard.populations.tables import (
    SCALES,
    model_entries,
    percentile_table,
    population_summary,
    ranking,
    welch_table,
)
from store import population_queries
from store.connection import open_reader, writing
from store.layout import copy_store
from store.populations import build_populations
from tests.page_support import assert_clean, charts, decoded, messages, run_page

PAGE = "pages/Populations.py"
MODELS = ["test-strong-it", "test-odd-base", "test-random-baseline"]



def _store(db, query, *args):
    con = open_reader(db)
    try:
        return query(con, *args)
    finally:
        con.close()


def _patterns(db, area="MT"):
    return _store(db, population_queries.model_patterns, 2023, area, None, None, None, MODELS)


def test_page_draws_populations_and_models(models_db):
    app = run_page(PAGE)
    assert_clean(app)
    assert app.title[0].value.startswith("Populations")
    figures = charts(app)
    assert len(figures) == 2
    box, forest = figures
    names = {trace.get("name") for trace in box["data"]}
    assert {"test-strong-it", "25th–75th percentile", "mean, 95% CI of the mean"} <= names
    # Both panels list the states and 'all candidates' besides the models.
    bars = [t for t in box["data"] if t["type"] == "bar"]
    assert len(bars) == 2 and "all candidates" in bars[0]["y"] and "SP" in bars[1]["y"]
    assert any("POOLED" in str(y) for t in forest["data"] for y in t.get("y", []))
    # ranks, the humans' intervals with measurement error, Welch tests, percentiles
    assert len(app.dataframe) == 4
    assert "percentile" in app.markdown[-1].value or any(
        "percentile" in m.value for m in app.markdown)


def test_page_switches_grouping_scale_and_estimator(models_db):
    app = run_page(PAGE)
    app.selectbox(key="populations.kind").set_value("income").run()
    app.radio(key="populations.scale").set_value("ENEM nota").run()
    app.radio(key="populations.estimator").set_value("ML").run()
    assert_clean(app)
    box = charts(app)[0]
    bars = [t for t in box["data"] if t["type"] == "bar"]
    assert any(label.startswith("income band") for label in bars[1]["y"])
    # Notas near 500, not logits.
    means = np.concatenate([decoded(t["x"]) for t in box["data"]
                            if t.get("name") == "mean, 95% CI of the mean"
                            and t.get("xaxis") == "x2"])  # the IRT panel
    assert 300 < np.nanmean(means) < 700
    ranks = app.dataframe[0].value
    assert set(ranks["name"]) >= set(MODELS)


def test_page_without_model_runs_and_empty_database(monkeypatch, pages_no_runs_db,
                                                    pages_empty_db):
    monkeypatch.setenv("ENEM_DB", str(pages_no_runs_db))
    app = run_page(PAGE)
    assert_clean(app)
    assert "No model runs for 2023" in messages(app)
    assert len(charts(app)) == 1  # the populations alone
    monkeypatch.setenv("ENEM_DB", str(pages_empty_db))
    app = run_page(PAGE)
    assert_clean(app)
    assert "empty" in messages(app)


def test_variants_are_clusters_pooled_by_random_effects(pages_models_db):
    patterns = _patterns(pages_models_db)
    variants = variant_estimates(patterns, ("prompt language", "shots"))
    mine = patterns[(patterns["model"] == "test-strong-it") & (patterns["prompt_language"] == "en")
                    & (patterns["shots"] == 4)]
    row = variants[(variants["model"] == "test-strong-it")
                   & (variants["variant"] == "en · 4-shot")].iloc[0]
    # One variant: the mean θ of its shuffles and the SE of one test (they share the items).
    assert row["theta"] == pytest.approx(mine["theta"].mean())
    assert row["se"] == pytest.approx(np.sqrt((mine["theta_se"] ** 2).mean()))
    assert row["pct"] == pytest.approx((100 * mine["ctt"] / mine["n_scored"]).mean())
    summaries = model_summaries(variants).set_index("model")
    strong = variants[variants["model"] == "test-strong-it"]
    # DerSimonian–Laird over the six variants, written out here.
    w = 1 / strong["se"].to_numpy() ** 2
    theta = strong["theta"].to_numpy()
    fixed = (w * theta).sum() / w.sum()
    q = (w * (theta - fixed) ** 2).sum()
    tau2 = max(0.0, (q - (len(theta) - 1)) / (w.sum() - (w ** 2).sum() / w.sum()))
    w_star = 1 / (strong["se"].to_numpy() ** 2 + tau2)
    model = summaries.loc["test-strong-it"]
    assert model["tau2"] == pytest.approx(tau2, abs=1e-12)
    assert model["theta"] == pytest.approx((w_star * theta).sum() / w_star.sum(), rel=1e-12)
    assert model["se"] == pytest.approx(1 / np.sqrt(w_star.sum()), rel=1e-12)
    assert model["variants"] == 6
    # Wider than pooling every shuffle as an independent test, as the page once did, by about
    # √(shuffles per variant) at least (more where the variants disagree).
    everything = patterns[patterns["model"] == "test-strong-it"]
    naive = pool_inverse_variance(everything["theta"], everything["theta_se"])
    assert model["se"] > 0.9 * np.sqrt(len(everything) / 6) * naive.se
    per_pattern = variant_estimates(patterns, ("prompt language", "shots", "repetition"))
    assert len(per_pattern) == len(patterns)


def test_ml_rescoring_is_the_bounded_ml_of_each_pattern(models_db):
    patterns = _patterns(models_db).head(40)
    rescored = ml_rescored(patterns, 2023)
    row = patterns.iloc[7]
    items = _store(models_db, lambda con: con.execute(
        """SELECT a, b, c FROM items WHERE year = 2023 AND booklet_id = ? AND position IS NOT NULL
             AND (item_language IS NULL OR item_language = ?) ORDER BY co_posicao""",
        [int(row["booklet_id"]), None if pd.isna(row["item_language"])
         else int(row["item_language"])]).df())
    marks = [np.nan if ch == "." else float(ch) for ch in row["response_pattern"]]
    usable = items[["a", "b", "c"]].notna().all(axis=1).to_numpy()
    responses = np.full((1, len(items)), np.nan)
    # The fixture's patterns list the usable items only; real runs list every item.
    responses[0, usable if len(marks) < len(items) else slice(None)] = marks
    expected = MLEstimator().estimate(responses, ItemBank.from_arrays(items["a"], items["b"],
                                                                      items["c"]))
    assert rescored["theta"].iloc[7] == pytest.approx(expected.theta[0], abs=1e-9)
    assert rescored["theta_se"].iloc[7] == pytest.approx(expected.se[0], abs=1e-9)
    assert not np.allclose(rescored["theta"], patterns["theta"])  # EAP shrinks, ML does not


def test_tables_agree_with_scipy_and_with_the_stored_rows(pages_models_db):
    rows = _store(pages_models_db, population_queries.population_rows, 2023, "MT", "state")
    assert set(rows["group_kind"]) == {"state", "all"}
    people = population_summary(rows, SCALES[2], "MT")
    assert people["irt_mean"].to_numpy() == pytest.approx(100 * rows["theta_mean"] + 500)
    assert people["irt_p25"].to_numpy() == pytest.approx(
        100 * np.stack(rows["theta_quantiles"].map(np.asarray))[:, 25] + 500)
    summaries = model_summaries(variant_estimates(_patterns(pages_models_db),
                                                  ("prompt language", "shots")))
    model = summaries.set_index("model").loc["test-odd-base"]
    welch = welch_table(model, people, SCALES[2], "MT")
    sp = people.index[people["name"] == "SP"][0]
    expected = stats.ttest_ind_from_stats(100 * model["variant_theta_mean"] + 500,
                                          100 * model["variant_theta_sd"], model["variants"],
                                          people.loc[sp, "irt_mean"], people.loc[sp, "irt_sd"],
                                          people.loc[sp, "n"], equal_var=False)
    assert welch.loc[sp, "irt_t"] == pytest.approx(expected.statistic, rel=1e-10)
    assert welch.loc[sp, "irt_p"] == pytest.approx(expected.pvalue, rel=1e-8)
    # one model against every population: Benjamini–Hochberg over them, as scipy computes it
    assert welch["irt_q"].to_numpy() == pytest.approx(
        stats.false_discovery_control(welch["irt_p"].to_numpy()), rel=1e-12)
    places = percentile_table(model, rows)
    raw = _store(pages_models_db, lambda con: con.execute(
        """SELECT theta FROM scores WHERE year = 2023 AND area = 'MT' AND state = 'SP'
             AND NOT isnan(theta) AND n_scored > 0""").df())["theta"]
    exact = stats.percentileofscore(raw, model["theta"], kind="mean")
    assert places.loc[places["value"] == "SP", "theta_percentile"].iloc[0] == \
        pytest.approx(exact, abs=1.0)
    ranks = ranking(pd.concat([people, model_entries(summaries, SCALES[2], "MT")],
                              ignore_index=True)).set_index("name")
    # The strong model (θ 1.6) tops every state; the random baseline is last by both.
    assert ranks.loc["test-strong-it", "rank_irt"] == 1
    assert ranks.loc["test-random-baseline", "rank_ctt"] == len(ranks)
    assert (ranks["change"] == ranks["rank_ctt"] - ranks["rank_irt"]).all()
    by_pct = ranks["pct_mean"].rank(ascending=False, method="min").astype(int)
    assert (ranks["rank_ctt"] == by_pct).all()


def test_real_items_only_year_shows_the_paper_runs_alone(monkeypatch, paper_db):
    """The paper's published runs on the real 2022 booklets (item files only, no candidates):
    no populations, the models alone, by EAP and by ML re-estimated from the published
    patterns (which list every item of the booklet, abandoned ones included)."""
    monkeypatch.setenv("ENEM_DB", str(paper_db))
    app = run_page(PAGE, {"year": "2022"})
    app.radio(key="populations.estimator").set_value("ML").run()
    assert_clean(app)
    assert "stored from its item file alone" in messages(app)
    box, forest = charts(app)
    assert not [t for t in box["data"] if t["type"] == "bar"]
    names = {t.get("name") for t in box["data"]}
    assert "llama2-13b · few-shot · 30 seeds" in names
    pooled = [t for t in forest["data"] if t["marker"].get("symbol") == "diamond"]
    assert pooled and all(np.isfinite(decoded(t["x"])).all() for t in pooled)


def test_leaving_flagged_booklets_out_uses_the_reproduced_rows(monkeypatch, tmp_path,
                                                               pages_models_db):
    db = tmp_path / "flagged.duckdb"
    copy_store(pages_models_db, db)
    with writing(db, year=2023) as con:
        booklet = con.execute("""SELECT booklet_id FROM booklet_audit WHERE year = 2023
                                 AND area = 'CN' ORDER BY booklet_id LIMIT 1""").fetchall()[0][0]
        con.execute("""UPDATE booklet_audit SET nota_matched = 0, nota_checked = 10
                       WHERE year = 2023 AND booklet_id = ?""", [booklet])
        con.execute("DELETE FROM agg_populations")
        build_populations(con, 2023)
        everyone, kept = con.execute(
            """SELECT count(*), count(*) FILTER (WHERE booklet_id <> ?) FROM scores
               WHERE year = 2023 AND area = 'CN' AND NOT isnan(theta) AND n_scored > 0""",
            [booklet]).fetchall()[0]
    monkeypatch.setenv("ENEM_DB", str(db))
    shown = {}
    for reproduced in ("", "only"):
        app = run_page(PAGE, {"area": "CN", "reproduced": reproduced} if reproduced
                       else {"area": "CN"})
        assert_clean(app)
        ranks = app.dataframe[0].value.set_index("name")
        shown[reproduced] = ranks.loc["all candidates", "n"]
    assert shown[""] == everyone and shown["only"] == kept < everyone


def test_humans_intervals_with_measurement_error_are_the_stored_plausible_values(
        monkeypatch, tmp_path, pages_models_db):
    monkeypatch.setenv("ENEM_DB", str(pages_models_db))
    app = run_page(PAGE, {"area": "MT"})
    assert_clean(app)
    [table] = [frame.value for frame in app.dataframe if "pv_mean" in frame.value.columns]
    stored = _store(pages_models_db, population_queries.population_rows, 2023, "MT", "state")
    shown = table.set_index("name")
    everyone = stored[stored["group_kind"] == "all"].iloc[0]
    row = shown.loc["all candidates"]
    assert row["pv_mean"] == pytest.approx(everyone["theta_pv_mean"])
    assert row["pv_ci_high"] - row["pv_ci_low"] == pytest.approx(
        2 * 1.96 * everyone["theta_pv_se"])
    assert row["eap_ci_high"] - row["eap_ci_low"] == pytest.approx(
        2 * 1.96 * everyone["theta_se"])  # the SE the figure draws
    assert (table["width_ratio"] > 1).all()
    # A store from before plausible values: one line says how to get them.
    old = tmp_path / "old.duckdb"
    copy_store(pages_models_db, old)
    with writing(old, year=2023) as con:
        con.execute("UPDATE agg_populations SET theta_pv_mean = NULL, theta_pv_sd = NULL, "
                    "theta_pv_se = NULL")
    monkeypatch.setenv("ENEM_DB", str(old))
    app = run_page(PAGE, {"area": "MT"})
    assert_clean(app)
    assert "before plausible values existed" in messages(app)
    assert not [frame for frame in app.dataframe if "pv_mean" in frame.value.columns]
