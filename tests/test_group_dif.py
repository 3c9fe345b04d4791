"""DIF between two groups of human candidates (``workflows.items.group_dif``), the control beside
the DIF between humans and machines on the Item gaps page.

The groups' score tables are built as the stored ``item_score_counts`` are: every group's
tables plus those of the candidates without a value add up to the stored tables of the form
(45- and 50-character LC strings included). The MH Δ equals a count made one candidate at a
time from the stored answer strings; a simulation with planted DIF finds the planted items and
only them; an item made much harder for the boys of a synthetic year comes out class C; the
command line prints the workflow's table; the page computes nothing until a grouping is picked,
then shows the table and keeps the choice in the URL.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from cli.main import main as cli_main
from enem.score_tables import form_score_counts
from store import item_queries
from store.connection import connected, open_reader, writing
from store.layout import copy_store
from tests.oracle_support import read_rows
from tests.page_support import assert_clean, run_page
from workflows.ingest import ingest_year
from workflows.items.group_dif import (
    GROUP_DIF_COLUMNS,
    GROUPINGS,
    OTHER_STATES,
    FormGroupTables,
    form_group_tables,
    group_contrast,
    group_dif,
    human_group_dif,
)
from workflows.items.selection import ItemSelection

PAGE = "pages/Item_gaps.py"
FLOAT_COLUMNS = ["mh_odds_ratio", "mh_delta", "mh_delta_se", "mh_chi2", "mh_p", "mh_q",
                 "reference_rate", "focal_rate"]


def _form(year: int, area: str, booklet: int, language: int | None = None) -> ItemSelection:
    return ItemSelection(year, area, booklet, language, None, None, ())


def _forms(db) -> list[tuple[int, str, int, int | None]]:
    with connected(db, read_only=True) as con:
        return [(int(y), a, int(b), None if pd.isna(lang) else int(lang))
                for y, a, b, lang in con.execute(
                    "SELECT DISTINCT year, area, booklet_id, item_language FROM item_score_counts "
                    "ORDER BY ALL").fetchall()]


def _largest_booklet(db, area: str) -> int:
    with connected(db, read_only=True) as con:
        return int(con.execute(
            "SELECT booklet_id FROM scores WHERE area = ? GROUP BY booklet_id "
            "ORDER BY count(*) DESC, booklet_id LIMIT 1", [area]).fetchone()[0])


def _assert_adds_up_to_the_store(con, tables: FormGroupTables, form: ItemSelection) -> None:
    ids, counts, by_score = item_queries.score_tables(con, form.year, form.area, form.booklet,
                                                      form.item_language)
    everyone = tables.pooled([value for value in tables.tables if value is not None])
    missing = tables.tables.get(None, (0, 0))
    assert np.array_equal(tables.item_ids, ids)
    assert np.array_equal(everyone[0] + missing[0], counts)
    assert np.array_equal(everyone[1] + missing[1], by_score)


@pytest.fixture(scope="module")
def ingested_2019(tmp_path_factory, demo_files_2019):
    """The small 2019 demo year: LC strings of 50 characters (both language blocks)."""
    db = tmp_path_factory.mktemp("group_dif_2019") / "enem.duckdb"
    ingest_year(db, 2019, demo_files_2019.microdata, demo_files_2019.items, progress=False)
    return db


@pytest.fixture(scope="module")
def sex_partly_missing(tmp_path_factory, ingested_2023):
    """The 2023 year with about one candidate in seven left without a sex."""
    db = tmp_path_factory.mktemp("group_dif_missing") / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    with writing(db, year=2023) as con:
        con.execute("UPDATE examinees SET sex = NULL WHERE hash(examinee_id) % 7 = 0")
    return db


# ---------------------------------------------------------------------------------------------
# (a) the groups' tables add up to the stored ones
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("grouping", GROUPINGS)
def test_the_groups_tables_add_up_to_the_stored_tables_of_every_form(ingested_2023,
                                                                     ingested_2019, grouping):
    for db in (ingested_2023[0], ingested_2019):
        with connected(db, read_only=True) as con:
            for year, area, booklet, language in _forms(db):
                form = _form(year, area, booklet, language)
                # Small batches: a form's candidates arrive in several of them.
                tables = form_group_tables(con, form, grouping, batch_rows=97)
                _assert_adds_up_to_the_store(con, tables, form)


def test_the_2019_lc_strings_have_both_language_blocks(ingested_2019):
    with connected(ingested_2019, read_only=True) as con:
        widths = {w for (w,) in con.execute(
            "SELECT DISTINCT length(responses_lc) FROM examinees "
            "WHERE presence_lc = 1").fetchall()}
    assert widths == {50}


def test_candidates_without_a_value_are_in_neither_group(sex_partly_missing):
    db = sex_partly_missing
    booklet = _largest_booklet(db, "MT")
    form = _form(2023, "MT", booklet)
    with connected(db, read_only=True) as con:
        tables = form_group_tables(con, form, "sex")
        _assert_adds_up_to_the_store(con, tables, form)
        stored = item_queries.score_tables(con, 2023, "MT", booklet)[1].sum()
    result = group_dif(tables)
    assert tables.candidates(None) > 0
    assert result.outside == tables.candidates(None)
    assert result.reference_candidates == tables.candidates("F")
    assert result.focal_candidates == tables.candidates("M")
    assert result.reference_candidates + result.focal_candidates + result.outside == stored


def test_public_against_private_leaves_the_other_school_types_out(ingested_2023):
    db, _ = ingested_2023
    booklet = _largest_booklet(db, "CN")
    with connected(db, read_only=True) as con:
        tables = form_group_tables(con, _form(2023, "CN", booklet), "school_type")
    result = group_dif(tables)
    assert result.contrast.reference == ("2",) and result.contrast.focal == ("3",)
    others = sum(tables.candidates(v) for v in tables.tables if v not in ("2", "3"))
    assert others > 0 and result.outside == others


# ---------------------------------------------------------------------------------------------
# (b) Δ against a count one candidate at a time
# ---------------------------------------------------------------------------------------------


def _slow_deltas(db, area: str, booklet: int) -> dict[int, float]:
    """MH Δ (female reference, male focal) of every counted item of a form, from the stored
    answer strings one candidate at a time: the counted items and their places are those of
    ``item_score_counts``, the keys those of ``items``."""
    con = open_reader(db)
    try:
        counted = con.execute(
            "SELECT DISTINCT position, item_id FROM item_score_counts WHERE area = ? "
            "AND booklet_id = ? ORDER BY position", [area, booklet]).fetchall()
        keys = dict(con.execute(
            "SELECT position, key FROM items WHERE booklet_id = ? AND position IS NOT NULL",
            [booklet]).fetchall())
        candidates = con.execute(
            f"""SELECT e.responses_{area.lower()}, e.sex FROM scores s
                JOIN examinees e ON e.year = s.year AND e.examinee_id = s.examinee_id
                WHERE s.area = ? AND s.booklet_id = ?""", [area, booklet]).fetchall()
    finally:
        con.close()
    # tables[item][score] = [A, B, C, D]: female right, female wrong, male right, male wrong
    tables: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0] * 4))
    for answers, sex in candidates:
        if set(answers) == {"."} or sex not in ("F", "M"):
            continue
        right = [answers[position - 1] == keys[position] for position, _ in counted]
        score = sum(right)
        for (_, item), is_right in zip(counted, right, strict=True):
            cell = (0 if sex == "F" else 2) + (0 if is_right else 1)
            tables[item][score][cell] += 1
    deltas = {}
    for _, item in counted:
        numerator = denominator = 0.0
        for a, b, c, d in tables[item].values():
            n = a + b + c + d
            numerator += a * d / n
            denominator += b * c / n
        deltas[item] = -2.35 * math.log(numerator / denominator)
    return deltas


def test_the_mh_delta_equals_a_count_one_candidate_at_a_time(ingested_2023):
    db, _ = ingested_2023
    booklet = _largest_booklet(db, "MT")
    with connected(db, read_only=True) as con:
        result = human_group_dif(con, _form(2023, "MT", booklet), "sex")
    expected = _slow_deltas(db, "MT", booklet)
    got = result.table.set_index("item_id")["mh_delta"]
    assert set(got.index) == set(expected)
    for item, delta in expected.items():
        assert got[item] == pytest.approx(delta, rel=1e-10, abs=1e-12)
    assert list(result.table.columns) == GROUP_DIF_COLUMNS
    assert (result.table["mh_q"] >= result.table["mh_p"] - 1e-15).all()


# ---------------------------------------------------------------------------------------------
# (c) planted DIF
# ---------------------------------------------------------------------------------------------


def _simulated_chars(rng, theta, a, b, c, keys) -> np.ndarray:
    """3PL answers as marks: the key when right, the next letter when wrong."""
    p = c + (1 - c) / (1 + np.exp(-1.7 * a * (theta[:, None] - b)))
    right = rng.random(p.shape) < p
    wrong = ((keys - ord("A") + 1) % 5 + ord("A")).astype(np.uint8)
    return np.where(right, keys, wrong).astype(np.uint8)


def test_a_simulation_finds_the_planted_dif_and_nothing_else():
    rng = np.random.default_rng(20240611)
    n_items, n = 40, 20_000
    a = rng.uniform(0.8, 2.0, n_items)
    b = rng.normal(0.5, 1.0, n_items)
    c = rng.uniform(0.1, 0.25, n_items)
    keys = rng.integers(ord("A"), ord("F"), n_items).astype(np.uint8)
    planted = {4: 0.8, 17: -0.8}  # b of the focal group shifted: + harder, − easier for them
    focal_b = b.copy()
    for item, shift in planted.items():
        focal_b[item] += shift
    # Impact: the focal group is half an SD weaker, which matching on the score must absorb.
    reference = _simulated_chars(rng, rng.normal(0.0, 1.0, n), a, b, c, keys)
    focal = _simulated_chars(rng, rng.normal(-0.5, 1.0, n), a, focal_b, c, keys)
    counted = np.ones(n_items, bool)
    tables = FormGroupTables("sex", np.arange(n_items) + 1000, np.arange(n_items) + 1, {
        "F": form_score_counts([reference], keys, counted, 4096),
        "M": form_score_counts([focal], keys, counted, 4096)})
    result = group_dif(tables).table
    for item, shift in planted.items():
        row = result.iloc[item]
        assert row["ets_class"] == "C"
        assert row["favours"] == ("female" if shift > 0 else "male")
        assert np.sign(row["mh_delta"]) == -np.sign(shift)
    others = result.drop(index=list(planted))
    assert (others["ets_class"] == "A").all()
    assert others["mh_delta"].abs().max() < 1.0


@pytest.fixture(scope="module")
def planted_year(tmp_path_factory, demo_files_2023):
    """The small 2023 year where 70% of the boys who got one MT item right were turned wrong
    (another letter) on one booklet: (database, booklet, the item's CO_ITEM)."""
    folder = tmp_path_factory.mktemp("group_dif_planted")
    rows = read_rows(demo_files_2023.microdata)
    items = read_rows(demo_files_2023.items)
    takers = defaultdict(int)
    for row in rows:
        if row["TP_PRESENCA_MT"] == "1":
            takers[row["CO_PROVA_MT"]] += 1
    booklet = max(takers, key=lambda key: (takers[key], key))
    target = next(item for item in sorted(items, key=lambda r: int(r["CO_POSICAO"]))
                  if item["CO_PROVA"] == booklet and item["NU_PARAM_A"]
                  and item["TX_GABARITO"] in tuple("ABCDE")
                  and item.get("IN_ITEM_ABAN", "0") != "1")
    place = int(target["CO_POSICAO"]) - min(int(r["CO_POSICAO"]) for r in items
                                             if r["CO_PROVA"] == booklet)
    key = target["TX_GABARITO"]
    rng = np.random.default_rng(5)
    for row in rows:
        answers = row["TX_RESPOSTAS_MT"]
        if (row["CO_PROVA_MT"] == booklet and row["TP_SEXO"] == "M" and answers
                and answers[place] == key and rng.random() < 0.7):
            wrong = "ABCDE"[("ABCDE".index(key) + 1) % 5]
            row["TX_RESPOSTAS_MT"] = answers[:place] + wrong + answers[place + 1:]
    microdata = folder / "MICRODADOS_ENEM_2023.csv"
    with open(microdata, "w", encoding="latin-1", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=";",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    db = folder / "enem.duckdb"
    ingest_year(db, 2023, microdata, demo_files_2023.items, progress=False)
    return db, int(booklet), int(target["CO_ITEM"])


def test_an_item_made_harder_for_the_boys_is_class_c(planted_year):
    db, booklet, item = planted_year
    with connected(db, read_only=True) as con:
        result = human_group_dif(con, _form(2023, "MT", booklet), "sex")
        other = human_group_dif(con, _form(2023, "MT", booklet), "school_type")
    table = result.table.set_index("item_id")
    assert table.loc[item, "ets_class"] == "C"
    assert table.loc[item, "favours"] == "female"
    assert table.loc[item, "mh_delta"] < 0
    assert table["mh_delta"].abs().idxmax() == item
    assert result.classes["C"] >= 1
    assert result.flagged_favouring["female"] >= 1
    # Not a school-type DIF: public and private pupils share the boys' handicap.
    assert other.table.set_index("item_id").loc[item, "ets_class"] != "C"


# ---------------------------------------------------------------------------------------------
# groups, contrasts, refusals
# ---------------------------------------------------------------------------------------------


def test_a_state_is_compared_with_every_other(ingested_2023):
    db, _ = ingested_2023
    booklet = _largest_booklet(db, "CH")
    with connected(db, read_only=True) as con:
        tables = form_group_tables(con, _form(2023, "CH", booklet), "state")
    states = tables.values()
    assert len(states) > 3
    assert [tables.candidates(s) for s in states] == sorted(
        (tables.candidates(s) for s in states), reverse=True)
    default = group_contrast(tables)
    assert default.focal == (states[0],) and default.reference_label == OTHER_STATES
    assert set(default.reference) == set(states[1:])
    chosen = group_dif(tables, focal=states[2])
    assert chosen.focal_candidates == tables.candidates(states[2])
    assert chosen.reference_candidates == sum(tables.candidates(s) for s in states) \
        - chosen.focal_candidates
    assert chosen.outside == tables.candidates(None)
    with pytest.raises(ValueError, match="must differ"):
        group_contrast(tables, reference=states[0], focal=states[0])
    with pytest.raises(ValueError, match="no candidate"):
        group_dif(tables, focal="XX")


def test_only_the_listed_groupings_reach_the_sql(ingested_2023):
    db, _ = ingested_2023
    with connected(db, read_only=True) as con:
        for bad in ("race", "sex; DROP TABLE scores", "1=1"):
            with pytest.raises(ValueError, match="unknown grouping"):
                item_queries.form_group_responses(con, 2023, "MT", 1, None, bad, 100)
            with pytest.raises(ValueError, match="unknown grouping"):
                form_group_tables(con, _form(2023, "MT", 1), bad)
        with pytest.raises(ValueError, match="one form per language"):
            form_group_tables(con, _form(2023, "LC", _largest_booklet(db, "LC")), "sex")


# ---------------------------------------------------------------------------------------------
# (d) the command line
# ---------------------------------------------------------------------------------------------


def _assert_same_table(printed: pd.DataFrame, frame: pd.DataFrame) -> None:
    assert list(printed.columns) == GROUP_DIF_COLUMNS
    assert printed["item_id"].tolist() == frame["item_id"].tolist()
    assert printed["position"].tolist() == frame["position"].tolist()
    np.testing.assert_allclose(printed[FLOAT_COLUMNS].to_numpy(float),
                               frame[FLOAT_COLUMNS].to_numpy(float), rtol=1e-12, atol=0)
    for column in ("ets_class", "favours"):
        assert printed[column].fillna("").astype(str).tolist() == frame[column].tolist()


@pytest.mark.parametrize(("area", "grouping", "state"), [
    ("MT", "sex", None), ("LC", "school_type", None), ("CN", "state", None),
    ("CN", "state", "second")])
def test_the_command_line_prints_the_workflow_table(planted_year, capsys, area, grouping, state):
    db, _, _ = planted_year
    booklet = _largest_booklet(db, area)
    language = 0 if area == "LC" else None  # what the command takes without runs
    with connected(db, read_only=True) as con:
        form = _form(2023, area, booklet, language)
        if state == "second":
            state = form_group_tables(con, form, "state").values()[1]
        expected = human_group_dif(con, form, grouping, focal=state)
    flags = ["--state", state] if state else []
    assert cli_main(["--db", str(db), "items", "--year", "2023", "--area", area,
                     "--booklet", str(booklet), "--table", "group-dif",
                     "--grouping", grouping, *flags]) == 0
    captured = capsys.readouterr()
    _assert_same_table(pd.read_csv(io.StringIO(captured.out)), expected.table)
    assert f"focal group: {expected.contrast.focal_label}" in captured.err


def test_the_command_line_refuses_loose_flags(planted_year, capsys):
    db, _, _ = planted_year
    base = ["--db", str(db), "items", "--year", "2023", "--area", "MT"]
    assert cli_main([*base, "--table", "group-dif"]) == 2
    assert cli_main([*base, "--grouping", "sex"]) == 2
    assert cli_main([*base, "--table", "group-dif", "--grouping", "sex", "--state", "SP"]) == 2
    assert cli_main([*base, "--table", "group-dif", "--grouping", "race"]) == 2
    assert cli_main([*base, "--table", "group-dif", "--grouping", "state",
                     "--state", "XX"]) == 2
    assert "no candidate" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# (e) the page
# ---------------------------------------------------------------------------------------------


def _group_table(app) -> pd.DataFrame | None:
    return next((frame.value for frame in app.dataframe
                 if list(frame.value.columns) == GROUP_DIF_COLUMNS), None)


def _page_booklet(app) -> int:
    heading = next(s.value for s in app.subheader if s.value.startswith("Control"))
    return int(heading.split("booklet ")[1].rstrip(")"))


def test_the_page_counts_nothing_until_a_grouping_is_picked(models_db):
    app = run_page(PAGE, {"gap_area": "MT"})
    assert_clean(app)
    assert any(s.value.startswith("Control: the same DIF between human groups")
               for s in app.subheader)
    picker = app.segmented_control(key="items.group_dif")
    assert picker.value is None
    assert _group_table(app) is None
    assert "group_dif" not in app.query_params
    app = picker.set_value("state").run()
    assert_clean(app)
    states = app.selectbox(key="items.group_dif_state")
    assert app.query_params["group_dif"] == "state"
    assert app.query_params["group_dif_state"] == states.value
    booklet = _page_booklet(app)
    with connected(models_db, read_only=True) as con:
        expected = human_group_dif(con, _form(2023, "MT", booklet), "state")
    assert states.value == expected.contrast.focal_label
    _assert_same_table(_group_table(app), expected.table)
    app = picker.set_value(None).run()
    assert _group_table(app) is None
    assert "group_dif" not in app.query_params and "group_dif_state" not in app.query_params


def test_a_link_opens_the_page_on_its_grouping(models_db):
    app = run_page(PAGE, {"gap_area": "MT", "group_dif": "sex"})
    assert_clean(app)
    assert app.segmented_control(key="items.group_dif").value == "sex"
    table = _group_table(app)
    booklet = _page_booklet(app)
    with connected(models_db, read_only=True) as con:
        expected = human_group_dif(con, _form(2023, "MT", booklet), "sex")
    _assert_same_table(table, expected.table)
    line = next(m.value for m in app.markdown
                if m.value.startswith("Between female and male candidates of the same score"))
    b, c = expected.classes["B"], expected.classes["C"]
    assert f"{b} item{'s' * (b != 1)} of class B, {c} of class C" in line
    assert "between the candidates and the selected runs" in line
    caption = " ".join(e.value for e in app.caption)
    assert f"Reference group: female ({expected.reference_candidates:,} candidates)" in caption
