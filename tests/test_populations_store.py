"""store.populations: the pre-aggregated populations of an ingested year against numpy on the
raw records, the new examinee columns, and the page's queries."""

from __future__ import annotations

import numpy as np
import pytest

from analytics.plausible_means import group_means
from analytics.populations import QUANTILE_LEVELS
from enem.scoring import ScoringOptions
from store import populations
from store.connection import open_reader, writing
from store.layout import copy_store
from workflows.ingest import ingest_year

RAW = """SELECT s.area, s.theta, s.nota, 100.0 * s.ctt / s.n_scored AS pct, s.ctt, s.booklet_id,
                e.state, CAST(e.school_type AS VARCHAR) AS school_type,
                CAST(e.school_admin AS VARCHAR) AS school_admin, e.sex,
                CAST(e.race AS VARCHAR) AS race, CAST(e.age_band AS VARCHAR) AS age_band,
                e.income, e.father_education, e.mother_education, e.internet
         FROM scores s JOIN examinees e USING (year, examinee_id)
         WHERE s.year = 2023 AND NOT isnan(s.theta) AND s.n_scored > 0"""


@pytest.fixture(scope="module")
def stored(ingested_2023):
    db, _ = ingested_2023
    con = open_reader(db)
    raw = con.execute(RAW).df()
    table = con.execute("SELECT * FROM agg_populations WHERE year = 2023").df()
    con.close()
    return raw, table


def _row(table, area, kind, value, booklets="all"):
    found = table[(table["area"] == area) & (table["group_kind"] == kind)
                  & (table["group_value"] == value) & (table["booklets"] == booklets)]
    assert len(found) == 1, (area, kind, value)
    return found.iloc[0]


def test_every_grouping_is_stored_for_every_area(stored):
    raw, table = stored
    for area in ("CN", "CH", "LC", "MT"):
        kinds = set(table.loc[table["area"] == area, "group_kind"])
        assert kinds == {"all", "state_school", *populations.GROUPINGS}
    # Groups of one kind partition the area's records.
    for (area, kind), part in table[table["booklets"] == "all"].groupby(["area", "group_kind"]):
        assert part["n"].sum() == (raw["area"] == area).sum(), (area, kind)


def test_demo_fills_the_new_examinee_columns(stored):
    raw, _ = stored
    assert set(raw["father_education"].dropna()) <= set("ABCDEFGH")
    assert raw["father_education"].nunique() > 3 and raw["mother_education"].nunique() > 3
    assert set(raw["internet"].dropna()) == {"A", "B"}
    # The administration is given only for candidates with a known school (1–3 public, 4 private).
    assert set(raw["school_admin"].dropna()) <= {"1", "2", "3", "4"}
    private = raw[raw["school_type"] == "3"]
    assert (private["school_admin"] == "4").all()


@pytest.mark.parametrize("kind, value", [("all", "all"), ("state", "SP"), ("school_type", "3"),
                                         ("income", "C"), ("internet", "B"),
                                         ("father_education", "E"), ("school_admin", "2")])
def test_stored_quantiles_and_moments_match_numpy_on_the_raw_records(stored, kind, value):
    raw, table = stored
    for area in ("CN", "MT"):
        members = raw[raw["area"] == area]
        if kind != "all":
            members = members[members[kind] == value]
        row = _row(table, area, kind, value)
        assert row["n"] == len(members)
        for name, column in (("theta", "theta"), ("nota", "nota"), ("pct", "pct")):
            values = members[column].to_numpy(float)
            np.testing.assert_allclose(row[f"{name}_quantiles"],
                                       np.percentile(values, QUANTILE_LEVELS),
                                       rtol=1e-12, atol=1e-9)
            assert row[f"{name}_mean"] == pytest.approx(values.mean(), rel=1e-12)
            assert row[f"{name}_sd"] == pytest.approx(values.std(ddof=1), rel=1e-9)
            assert row[f"{name}_se"] == pytest.approx(values.std(ddof=1) / np.sqrt(len(values)),
                                                      rel=1e-9)
        assert row["ctt_mean"] == pytest.approx(members["ctt"].mean(), rel=1e-12)
        assert row["ctt_sd"] == pytest.approx(members["ctt"].std(ddof=1), rel=1e-9)


def test_crossing_state_by_school_type(stored):
    raw, table = stored
    members = raw[(raw["area"] == "LC") & (raw["state"] == "SP") & (raw["school_type"] == "2")]
    row = _row(table, "LC", "state_school", "SP|2")
    assert row["n"] == len(members)
    np.testing.assert_allclose(row["theta_quantiles"],
                               np.percentile(members["theta"], QUANTILE_LEVELS), rtol=1e-12)


def test_numpy_default_is_duckdb_quantile_cont_not_quantile_disc(ingested_2023, stored):
    """The stored percentiles follow numpy's default rule, which is DuckDB's quantile_cont;
    quantile_disc (an observed value, no interpolation) differs."""
    db, _ = ingested_2023
    _, table = stored
    con = open_reader(db)
    cont, disc = con.execute(
        """SELECT quantile_cont(theta, [0.05, 0.25, 0.5, 0.75, 0.95]),
                  quantile_disc(theta, [0.05, 0.25, 0.5, 0.75, 0.95])
           FROM scores WHERE year = 2023 AND area = 'CH' AND state = 'RJ'
             AND NOT isnan(theta) AND n_scored > 0""").fetchall()[0]
    con.close()
    stored_q = np.asarray(_row(table, "CH", "state", "RJ")["theta_quantiles"])[[5, 25, 50, 75,
                                                                                95]]
    np.testing.assert_allclose(stored_q, cont, rtol=1e-12)
    assert not np.allclose(stored_q, disc, rtol=1e-9, atol=0)


def test_missing_values_are_their_own_population(stored):
    raw, table = stored
    # Candidates without a known school have no administration.
    unknown = raw[(raw["area"] == "CN") & raw["school_admin"].isna()]
    assert len(unknown) > 0
    assert _row(table, "CN", "school_admin", populations.MISSING)["n"] == len(unknown)


def test_reproduced_rows_leave_flagged_booklets_out(tmp_path, ingested_2023):
    db = tmp_path / "flagged.duckdb"
    copy_store(ingested_2023[0], db)
    with writing(db, year=2023) as con:
        booklet = con.execute("""SELECT booklet_id FROM booklet_audit WHERE year = 2023
                                 AND area = 'MT' ORDER BY booklet_id LIMIT 1""").fetchall()[0][0]
        con.execute("""UPDATE booklet_audit SET nota_matched = 0, nota_checked = 10
                       WHERE year = 2023 AND booklet_id = ?""", [booklet])
        con.execute("DELETE FROM agg_populations")
        populations.build_populations(con, 2023)
        raw = con.execute(RAW).df()
        table = con.execute("SELECT * FROM agg_populations").df()
    assert populations.REPRODUCED_BOOKLETS in set(table["booklets"])
    kept = raw[(raw["area"] == "MT") & (raw["booklet_id"] != booklet)]
    row = _row(table, "MT", "all", "all", populations.REPRODUCED_BOOKLETS)
    assert row["n"] == len(kept) < (raw["area"] == "MT").sum()
    np.testing.assert_allclose(row["theta_quantiles"],
                               np.percentile(kept["theta"], QUANTILE_LEVELS), rtol=1e-12)
    assert _row(table, "CN", "all", "all", populations.REPRODUCED_BOOKLETS)["n"] == \
        (raw["area"] == "CN").sum()


def test_notas_on_the_paper_scale_are_summarised_exactly(tmp_path, demo_files_2023):
    """With --scale paper the nota is 100·θ + 500, unrounded: not whole tenths, so its
    quantiles come from sorting rather than from counts."""
    db = tmp_path / "paper.duckdb"
    ingest_year(db, 2023, demo_files_2023.microdata, demo_files_2023.items, progress=False,
                options=ScoringOptions(scale="paper"), source="demo", is_synthetic=True)
    con = open_reader(db)
    raw = con.execute(RAW).df()
    table = con.execute("SELECT * FROM agg_populations").df()
    con.close()
    members = raw[(raw["area"] == "CH") & (raw["race"] == "3")]
    row = _row(table, "CH", "race", "3")
    np.testing.assert_allclose(row["nota_quantiles"], np.percentile(members["nota"],
                                                                    QUANTILE_LEVELS),
                               rtol=1e-12)
    assert row["nota_sd"] == pytest.approx(members["nota"].std(ddof=1), rel=1e-9)


def test_ids_that_are_not_numbers_join_as_text(tmp_path, ingested_2023, stored):
    """The join runs on the numeric registration number only when every id is digits of one
    length; other ids join as text, with the same populations."""
    _, expected = stored
    db = tmp_path / "text_ids.duckdb"
    copy_store(ingested_2023[0], db)
    with writing(db, year=2023) as con:
        for table in ("examinees", "scores"):
            con.execute(f"UPDATE {table} SET examinee_id = 'id-' || examinee_id")
        con.execute("DELETE FROM agg_populations")
        populations.build_populations(con, 2023)
        table = con.execute("SELECT * FROM agg_populations").df()
    key = ["area", "booklets", "group_kind", "group_value"]
    merged = expected.merge(table, on=key, suffixes=("", "_text"))
    assert len(merged) == len(expected) == len(table)
    assert (merged["n"] == merged["n_text"]).all()
    np.testing.assert_allclose(merged["theta_mean"], merged["theta_mean_text"], rtol=1e-12)


@pytest.mark.parametrize("kind", ["all", "state", "school_type"])
def test_plausible_value_means_equal_the_per_candidate_fit(ingested_2023, stored, kind):
    _, table = stored
    db, _ = ingested_2023
    with open_reader(db) as con:
        raw = con.execute("""SELECT s.area, s.theta, s.theta_se,
                                    CAST(e.state AS VARCHAR) AS state,
                                    CAST(e.school_type AS VARCHAR) AS school_type
                             FROM scores s JOIN examinees e USING (year, examinee_id)
                             WHERE s.year = 2023 AND NOT isnan(s.theta) AND s.n_scored > 0
                               AND s.area = 'CH'""").df()
    values = (raw.assign(all="all")[kind].fillna(populations.MISSING)).astype(str)
    labels = sorted(values.unique())
    reference = group_means(raw["theta"], raw["theta_se"], values.map(labels.index), len(labels))
    for index, label in enumerate(labels):
        row = _row(table, "CH", kind, label)
        assert row["n"] == reference.n[index]
        assert row["theta_pv_mean"] == pytest.approx(reference.mean[index], abs=3e-4)
        assert row["theta_pv_sd"] == pytest.approx(reference.sd[index], abs=3e-4)
        if reference.n[index] >= 2:
            assert row["theta_pv_se"] == pytest.approx(reference.se[index], rel=5e-3)
    # Measurement error widens the interval of the mean beyond SD/√n of the EAPs.
    everyone = _row(table, "CH", "all", "all")
    assert everyone["theta_pv_se"] > everyone["theta_se"]
