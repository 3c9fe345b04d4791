"""Conditions side by side: the means and differences of analytics.conditions against hand
formulas and scipy's t quantiles, the consistency of choices across repetitions by hand and
against scipy's entropy, the page's data steps on small tables, and the paper's
published results: gpt-3.5's 2022 CH θ in English and Portuguese are the plain means of those
rows of the results file, and their paired difference is read seed by seed."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analytics.conditions import level_mean, paired_difference, welch_difference
from analytics.consistency import item_consistency, run_consistency
from dashboard.conditions import data as cd
from store.condition_queries import condition_choices, condition_patterns
from store.connection import connected
from store.model_sql import UNCOUNTED_SHOTS
from store.schema import ensure_schema
from tests.page_support import run_page

RESULTS = "paper-results/enem-experiments-results-processed-with-irt-lz.parquet"
GPT_SEEDS = "gpt-3.5-turbo-0613 · few-shot · 30 seeds"


def test_level_mean_is_the_normal_interval_of_the_mean():
    summary = level_mean([1.0, 2.0, 3.0, 4.0, np.nan])
    sd = np.sqrt(((1.5 ** 2 + 0.5 ** 2) * 2) / 3)
    assert summary.n == 4 and summary.mean == pytest.approx(2.5)
    assert summary.sd == pytest.approx(sd)
    assert summary.ci_low == pytest.approx(2.5 - 1.96 * sd / 2)
    assert summary.ci_high == pytest.approx(2.5 + 1.96 * sd / 2)
    one = level_mean([3.0])
    assert one.n == 1 and one.mean == 3.0 and np.isnan(one.ci_low)
    assert level_mean([]).n == 0


def test_paired_difference_by_hand():
    first = np.array([0.1, 0.5, -0.2, 0.9, 0.3, 0.0])
    second = np.array([0.4, 0.6, 0.3, 1.2, 0.5, 0.2])
    d = second - first
    n = d.size
    se = d.std(ddof=1) / np.sqrt(n)
    t = stats.t.ppf(0.975, n - 1)
    result = paired_difference(first, second)
    assert result.paired and result.n_first == n and result.df == n - 1
    assert result.difference == pytest.approx(d.mean())
    assert result.se == pytest.approx(se)
    assert (result.ci_low, result.ci_high) == pytest.approx((d.mean() - t * se,
                                                             d.mean() + t * se))
    assert result.p == pytest.approx(2 * stats.t.sf(abs(d.mean() / se), n - 1))


def test_welch_difference_by_hand():
    first = np.array([1.0, 2.0, 4.0, 3.5, 2.2])
    second = np.array([2.5, 3.0, 5.5, 4.0, 6.1, 4.4, 3.9])
    v1, v2 = first.var(ddof=1) / first.size, second.var(ddof=1) / second.size
    df = (v1 + v2) ** 2 / (v1 ** 2 / (first.size - 1) + v2 ** 2 / (second.size - 1))
    diff, se = second.mean() - first.mean(), np.sqrt(v1 + v2)
    t = stats.t.ppf(0.975, df)
    result = welch_difference(first, second)
    assert not result.paired and (result.n_first, result.n_second) == (5, 7)
    assert result.difference == pytest.approx(diff) and result.se == pytest.approx(se)
    assert result.df == pytest.approx(df)
    assert (result.ci_low, result.ci_high) == pytest.approx((diff - t * se, diff + t * se))
    assert result.p == pytest.approx(2 * stats.t.sf(abs(diff / se), df))


def test_pairing_removes_what_the_repetitions_share():
    # Repetitions differ a lot from one another, the second condition adds 0.3 to each: the
    # paired interval finds the shift, the independent one cannot tell it from noise.
    rng = np.random.default_rng(3)
    shared = rng.normal(0.0, 1.0, 30)
    first = shared + rng.normal(0.0, 0.05, 30)
    second = shared + 0.3 + rng.normal(0.0, 0.05, 30)
    paired = paired_difference(first, second)
    independent = welch_difference(first, second)
    assert paired.ci_low > 0.2 and paired.ci_high < 0.4
    assert independent.ci_low < 0 < independent.ci_high
    assert paired.difference == pytest.approx(independent.difference)


def test_degenerate_differences():
    same_shift = paired_difference([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert same_shift.difference == pytest.approx(0.5) and same_shift.se == 0
    assert same_shift.ci_low == same_shift.ci_high == same_shift.difference
    assert np.isnan(same_shift.p)
    assert np.isnan(paired_difference([1.0], [2.0]).difference)
    assert np.isnan(welch_difference([1.0, 2.0], [3.0]).ci_low)
    with pytest.raises(ValueError, match="not pairs"):
        paired_difference([1.0, 2.0], [1.0])


def _patterns(rows: list[tuple]) -> pd.DataFrame:
    columns = ["run", "model_id", "year", "area", "prompt_language", "shots", "repetition",
               "shuffle", "published_theta"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.assign(theta=frame["published_theta"], ctt=0, n_scored=45,
                        temperature=0.6, answer_method=None)


def test_other_conditions_are_held_and_all_areas_keeps_complete_repetitions():
    rows = []
    for area, base in (("CH", 1.0), ("MT", 0.0)):
        for shuffle in range(3):
            for language, shift in (("en", 0.0), ("pt", 0.5)):
                rows.append(("run A", "m", 2022, area, language, 0, "shuffle", shuffle,
                             base + shift + shuffle))
                # Another shots setting: must never be pooled into the 0-shot comparison.
                rows.append(("run A", "m", 2022, area, language, 4, "shuffle", shuffle, 9.0))
    rows.append(("run A", "m", 2022, "CH", "pt", 0, "shuffle", 3, 9.0))  # no MT twin
    chosen = cd.compared_patterns(_patterns(rows), "prompt language", "published θ",
                                  language="pt", shots=0, year=2022)
    assert set(chosen["value"]) != {9.0} and 9.0 not in set(chosen.loc[
        chosen["level"] != "Portuguese (pt)", "value"])
    pooled = cd.with_all_areas(chosen)
    everywhere = pooled[pooled["area"] == cd.ALL_AREAS]
    assert len(everywhere) == 6  # 3 repetitions × 2 languages; shuffle 3 lacks MT
    en = everywhere[everywhere["level"] == "English (en)"].sort_values("shuffle")
    assert en["value"].tolist() == pytest.approx([0.5, 1.5, 2.5])
    differences = cd.difference_table(pooled, "English (en)", "Portuguese (pt)", paired=True)
    for _, row in differences.iterrows():
        assert row["difference"] == pytest.approx(0.5)
        assert row["n_first"] == 3  # the unmatched CH repetition 3 pairs with nothing


def test_statistics_offered_need_published_theta_on_every_pattern():
    patterns = _patterns([("r", "m", 2022, "CH", "pt", 0, "seed", 0, 1.0),
                          ("r", "m", 2022, "CH", "en", 0, "seed", 0, np.nan)])
    assert "published θ" not in cd.statistics_offered(patterns)
    assert cd.statistics_offered(patterns.iloc[:1])[0] == "published θ"


def _published(real_data, language: str) -> pd.DataFrame:
    return duckdb.execute(
        f"""SELECT SEED AS seed, IRT_SCORE AS theta FROM '{real_data / RESULTS}'
            WHERE MODEL_NAME = 'gpt-3.5-turbo-0613' AND EXAM_YEAR = '2022'
              AND EXAM_SUBJECT = 'CH' AND LANGUAGE = $language ORDER BY seed""",
        {"language": language}).df()


def test_paper_language_means_are_the_plain_means_of_the_published_rows(paper_db, real_data,
                                                                       monkeypatch):
    en, pt = _published(real_data, "en"), _published(real_data, "pt-br")
    assert len(en) == len(pt) == 30
    with connected(paper_db, read_only=True) as con:
        patterns = condition_patterns(con, [2022], ["CH"], [GPT_SEEDS])
    rows = cd.compared_patterns(patterns, "prompt language", "published θ", language="pt",
                                shots=UNCOUNTED_SHOTS, year=2022)
    levels = cd.level_table(rows).set_index("level")
    assert levels.loc["English (en)", "mean"] == pytest.approx(en["theta"].mean(), abs=1e-9)
    assert levels.loc["Portuguese (pt)", "mean"] == pytest.approx(pt["theta"].mean(), abs=1e-9)
    assert levels["n"].tolist() == [30, 30]
    by_seed = en.merge(pt, on="seed", suffixes=("_en", "_pt"))
    expected = paired_difference(by_seed["theta_en"], by_seed["theta_pt"])
    got = cd.difference_table(rows, "English (en)", "Portuguese (pt)", paired=True).iloc[0]
    assert got["difference"] == pytest.approx(pt["theta"].mean() - en["theta"].mean())
    assert (got["ci_low"], got["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high))

    # The page shows the same row (its address holds the comparison).
    monkeypatch.setenv("ENEM_DB", str(paper_db))
    app = run_page("pages/Conditions.py", {"year": "2022", "area": "CH", "lang": "pt",
                                           "shots": "published", "compare": "prompt language",
                                           "stat": "published θ"})
    assert not app.exception
    table = app.dataframe[0].value
    shown = table[table["series"] == GPT_SEEDS].iloc[0]
    assert shown["difference"] == pytest.approx(got["difference"])
    assert shown["ci_low"] == pytest.approx(expected.ci_low)
    assert len(app.get("plotly_chart")) == 2


def test_the_address_chooses_dimension_statistic_and_levels(models_db):
    query = {"area": "MT", "lang": "en", "compare": "shots", "stat": "% correct",
             "level_from": "0-shot", "level_to": "4-shot"}
    app = run_page("pages/Conditions.py", query)
    assert not app.exception
    table = app.dataframe[0].value
    assert set(table["first"]) == {"0-shot"} and set(table["second"]) == {"4-shot"}
    row = table.iloc[0]
    with connected(models_db, read_only=True) as con:
        patterns = condition_patterns(con, [2023], ["MT"], [row["series"]])
    chosen = patterns[(patterns["prompt_language"] == "en") & (patterns["area"] == "MT")]
    pct = 100 * chosen["ctt"] / chosen["n_scored"]
    zero = pct[chosen["shots"] == 0].to_numpy()
    four = pct[chosen["shots"] == 4].to_numpy()
    # Shuffle k of 0-shot against shuffle k of 4-shot (the query orders by shuffle).
    expected = paired_difference(zero, four)
    assert row["area"] == "MT" and row["paired"]
    assert row["difference"] == pytest.approx(four.mean() - zero.mean())
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high))
    assert app.radio(key="conditions.statistic").value == "% correct"


def test_item_consistency_by_hand():
    items = item_consistency([["A", "A", "B", ""], ["C", "C", "C", "C"], ["", "", "", ""]])
    assert items.answered.tolist() == [3, 4, 0]
    assert items.modal_share[:2] == pytest.approx([2 / 3, 1.0]) and np.isnan(items.modal_share[2])
    third = 1 / 3
    assert items.entropy[0] == pytest.approx(-(2 * third * np.log2(2 * third)
                                               + third * np.log2(third)))
    assert items.entropy[1] == 0.0 and items.changed.tolist() == [True, False, False]
    assert items.modal_choice.tolist() == ["A", "C", ""]
    run = run_consistency(items)
    assert run.items == 2 and run.share_changed == pytest.approx(0.5)
    assert run.mean_modal_share == pytest.approx((2 / 3 + 1) / 2)
    with pytest.raises(ValueError, match="items × repetitions"):
        item_consistency(["A", "B"])


def test_item_entropy_matches_scipy_on_random_choices():
    rng = np.random.default_rng(11)
    choices = rng.choice(list("ABCDE"), size=(40, 30), p=[0.5, 0.2, 0.1, 0.1, 0.1])
    items = item_consistency(choices)
    for row, entropy, modal in zip(choices, items.entropy, items.modal_share, strict=True):
        counts = np.unique(row, return_counts=True)[1]
        assert entropy == pytest.approx(stats.entropy(counts, base=2))
        assert modal == pytest.approx(counts.max() / row.size)


def test_the_page_shows_each_runs_consistency(paper_db, monkeypatch):
    monkeypatch.setenv("ENEM_DB", str(paper_db))
    app = run_page("pages/Conditions.py", {"year": "2022", "area": "MT", "lang": "en",
                                           "shots": "published"})
    assert not app.exception
    [table] = [frame.value.set_index("series") for frame in app.dataframe
               if "mean_modal_share" in frame.value.columns]
    with connected(paper_db, read_only=True) as con:
        choices = condition_choices(con, 2022, ["MT"], [GPT_SEEDS], "en", UNCOUNTED_SHOTS)
    matrix = choices.pivot(index="position", columns="shuffle", values="choice")
    modal = [row.value_counts().max() / row.size for _, row in matrix.iterrows()]
    assert matrix.shape == (45, 30)
    assert table.loc[GPT_SEEDS, "mean_modal_share"] == pytest.approx(np.mean(modal))
    assert table.loc[GPT_SEEDS, "share_changed"] == pytest.approx(
        np.mean([row.nunique() > 1 for _, row in matrix.iterrows()]))
    # Per item, the least consistent first: each item's entropy and most chosen option.
    [items] = [frame.value for frame in app.dataframe if "modal_choice" in frame.value.columns]
    gpt = items[items["series"] == GPT_SEEDS]
    entropies = {position: stats.entropy(row.value_counts().to_numpy(), base=2)
                 for position, row in matrix.iterrows()}
    assert list(gpt["entropy"]) == sorted(gpt["entropy"], reverse=True)
    for row in gpt.itertuples():
        assert row.entropy == pytest.approx(entropies[row.position])
        counts = matrix.loc[row.position].value_counts()
        assert counts[row.modal_choice] == counts.max()


def test_the_sidebar_booklet_keeps_its_area_to_the_booklets_with_its_items():
    con = duckdb.connect()
    ensure_schema(con)
    # MT booklets 1 and 2 hold the same items in other orders; booklet 3 other items.
    for booklet, items in ((1, (10, 11)), (2, (11, 10)), (3, (20, 21))):
        for position, item in enumerate(items, start=1):
            con.execute("INSERT INTO items (year, item_id, area, booklet_id, position) "
                        "VALUES (2023, ?, 'MT', ?, ?)", [item, booklet, position])
    con.execute("INSERT INTO model_runs (run_id, model_id, label) VALUES ('r', 'm', 'run r')")
    for area, booklet in (("MT", 1), ("MT", 2), ("MT", 3), ("CH", 9)):
        con.execute("INSERT INTO model_scores (run_id, year, area, booklet_id, prompt_language, "
                    "shots, shuffle, theta) VALUES ('r', 2023, ?, ?, 'pt', 0, 0, 0.5)",
                    [area, booklet])
    every = condition_patterns(con, [2023], ["MT", "CH"], ["run r"])
    assert sorted(every["booklet_id"]) == [1, 2, 3, 9]
    kept = condition_patterns(con, [2023], ["MT", "CH"], ["run r"], booklet=(2023, "MT", 2))
    assert sorted(kept["booklet_id"]) == [1, 2, 9]  # CH is another area: untouched
    other_year = condition_patterns(con, [2023], ["MT", "CH"], ["run r"],
                                    booklet=(2022, "MT", 2))
    assert sorted(other_year["booklet_id"]) == [1, 2, 3, 9]


def test_the_difference_table_controls_false_discoveries_over_its_rows():
    rng = np.random.default_rng(9)
    rows = pd.DataFrame([
        {"series": f"m{m}", "area": area, "level": level, "year": 2022, "shuffle": k,
         "value": rng.normal(0.3 * m * (level == "b"), 1.0)}
        for m in range(4) for area in ("CH", "MT") for level in ("a", "b") for k in range(12)])
    table = cd.difference_table(rows, "a", "b", paired=False)
    assert len(table) == 8 and table["p"].notna().all()
    assert table["q"].to_numpy() == pytest.approx(
        stats.false_discovery_control(table["p"].to_numpy()))
