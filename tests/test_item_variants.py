"""Item files as INEP really wrote them: every year's variant is scored, none refused.

Real files (2019–2022) come from the shared folder; the variants of other years (2009 rows
without CO_ITEM, spreadsheet floats, 2013's doubled listing, 2009/2010 column sets) are written
here as small INEP-format files (``;``, Latin-1). Expected forms and scores are worked out with
the csv module and the slow EAP of ``tests.oracle_support``, sharing no code with the project.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from enem.items import DOUBLE_LISTING_NOTE, load_items, missing_item_id
from enem.pattern_files import score_pattern_frame
from enem.score_batches import AreaAccumulator, score_batch
from store.connection import open_reader
from store.item_queries import form_items
from store.model_runs import load_form
from tests.oracle_support import ENEM_K_D, slow_eap
from workflows.ingest import ingest_items

REAL_YEARS = (2019, 2020, 2021, 2022)
DIGITAL_BOOKLETS = (691, 692, 693, 694)
HEADER_2009 = ("CO_POSICAO", "SG_AREA", "CO_ITEM", "TX_GABARITO", "CO_HABILIDADE",
               "IN_ITEM_ABAN", "TX_MOTIVO_ABAN", "NU_PARAM_A", "NU_PARAM_B", "NU_PARAM_C",
               "TX_COR", "CO_PROVA")
HEADER_2010 = HEADER_2009 + ("TP_LINGUA",)
HEADER_2019 = HEADER_2010 + ("IN_ITEM_ADAPTADO",)


def _write_items(path, header, rows):
    """An ITENS_PROVA file: ``rows`` are dicts (missing columns empty), Latin-1, ``;``."""
    lines = [";".join(header)]
    lines += [";".join(str(row.get(column, "")) for column in header) for row in rows]
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    return path


def _item(position, item_id, key, a, b, c, booklet, area="MT", **extra):
    row = {"CO_POSICAO": position, "SG_AREA": area, "CO_ITEM": item_id, "TX_GABARITO": key,
           "CO_HABILIDADE": 3, "IN_ITEM_ABAN": 0, "NU_PARAM_A": a, "NU_PARAM_B": b,
           "NU_PARAM_C": c, "TX_COR": "AZUL", "CO_PROVA": booklet, "TP_LINGUA": "",
           "IN_ITEM_ADAPTADO": 0}
    row.update(extra)
    return row


def _abandoned(position, booklet, area="LC", item_id="", reason="Pedagógico", **extra):
    """An abandoned row as 2009 wrote it: no parameters, key X, maybe no CO_ITEM."""
    extra = {"IN_ITEM_ABAN": 1, "TX_MOTIVO_ABAN": reason, "TX_COR": "CINZA", **extra}
    return _item(position, item_id, "X", "", "", "", booklet, area=area, **extra)


def _slow_theta(answers, items):
    """EAP θ, SE and ENEM nota of a string against (key, params or None) items, by hand."""
    pattern = [1.0 if mark == key else 0.0 for mark, (key, _) in zip(answers, items, strict=True)]
    theta, se = slow_eap(pattern, [params for _, params in items])
    return theta, se


def _score_string(items, booklet, answers, language=None):
    """θ, SE, nota of one TX_RESPOSTAS through the score-patterns path."""
    frame = pd.DataFrame({"CO_PROVA": [str(booklet)], "TX_RESPOSTAS": [answers],
                          "TP_LINGUA": ["" if language is None else str(language)]})
    out = score_pattern_frame(frame, items)
    assert out["SCORE_ERROR"][0] == "", out["SCORE_ERROR"][0]
    return float(out["THETA"][0]), float(out["THETA_SE"][0]), float(out["NOTA"][0])


# --- real files ----------------------------------------------------------------------------

def _real_rows(real_data, year):
    with open(real_data / "items" / f"ITENS_PROVA_{year}.csv", encoding="latin-1",
              newline="") as handle:
        return list(csv.DictReader(handle, delimiter=";"))


@pytest.mark.parametrize("year", REAL_YEARS)
def test_real_item_files_load_with_no_invalid_booklet(real_data, year):
    items = load_items(real_data / "items" / f"ITENS_PROVA_{year}.csv")
    booklets = {int(float(r["CO_PROVA"])) for r in _real_rows(real_data, year)}
    assert items.invalid == {}
    assert {key[0] for key in items.forms} == booklets
    assert {form.n_items for form in items.forms.values()} == {45}


def test_2020_digital_booklets_score_each_language_against_its_version(real_data):
    items = load_items(real_data / "items" / "ITENS_PROVA_2020.csv")
    english, spanish = items.form(691, 0), items.form(691, 1)
    assert english.item_ids[:5].tolist() == [49226, 40983, 40963, 9551, 76725]
    assert spanish.item_ids[:5].tolist() == [86752, 86744, 96837, 88894, 41833]
    assert english.n_items == spanish.n_items == 45
    assert english.language_items == spanish.language_items == 5
    rows = _real_rows(real_data, 2020)
    for booklet in DIGITAL_BOOKLETS:
        for version in (0, 1):
            listed = sorted((r for r in rows if r["CO_PROVA"] == str(booklet)
                             and r["TP_VERSAO_DIGITAL"] == f"{version}.0"),
                            key=lambda r: float(r["CO_POSICAO"]))
            assert len(listed) == 45
            assert items.form(booklet, version).item_ids.tolist() == [
                int(r["CO_ITEM"]) for r in listed]
    # The two versions hold the same 40 common items, in another order.
    assert sorted(english.item_ids[5:]) == sorted(spanish.item_ids[5:])
    assert english.item_ids[5:].tolist() != spanish.item_ids[5:].tolist()


def test_2020_digital_fifty_character_string_matches_hand_scoring(real_data):
    items = load_items(real_data / "items" / "ITENS_PROVA_2020.csv")
    listed = sorted((r for r in _real_rows(real_data, 2020)
                     if r["CO_PROVA"] == "691" and r["TP_VERSAO_DIGITAL"] == "1.0"),
                    key=lambda r: float(r["CO_POSICAO"]))
    hand = [(r["TX_GABARITO"], None if r["NU_PARAM_A"] == "" else
             (float(r["NU_PARAM_A"]), float(r["NU_PARAM_B"]), float(r["NU_PARAM_C"])))
            for r in listed]
    rng = np.random.default_rng(20)
    spanish_and_common = "".join(
        key if rng.random() < 0.55 else rng.choice(list("ABCDE.")) for key, _ in hand)
    wide = "99999" + spanish_and_common  # English block unchosen, Spanish 6–10, then 40
    theta, se = _slow_theta(spanish_and_common, hand)
    k, d = ENEM_K_D["LC"]
    batch = pa.RecordBatch.from_pydict({
        "examinee_id": ["1"], "booklet_id": pa.array([691], pa.int32()),
        "language": pa.array([1], pa.int16()), "responses": [wide],
        "nota_official": pa.array([round(k * theta + d, 1)]), "state": ["SP"],
        "school_type": pa.array([1], pa.int16())})
    accumulator = AreaAccumulator()
    result = score_batch(batch, 2020, "LC", items, accumulator)
    assert result.rejected_reasons == []
    got = result.scores.to_pylist()[0]
    assert got["item_language"] == 1
    assert got["theta"] == pytest.approx(theta, abs=1e-9)
    assert got["theta_se"] == pytest.approx(se, abs=1e-9)
    assert got["nota"] == pytest.approx(round(k * theta + d, 1), abs=1e-9)
    assert accumulator.audit[691].nota_matched == 1
    assert _score_string(items, 691, wide, language=1)[0] == pytest.approx(theta, abs=1e-9)


def test_real_items_store_every_booklet_valid_and_the_digital_versions(real_items_db):
    con = open_reader(real_items_db)
    try:
        invalid = con.execute("SELECT count(*) FROM booklets WHERE NOT valid").fetchone()[0]
        versions = con.execute(
            """SELECT version, count(*), count(position), max(position) FROM items
               WHERE year = 2020 AND booklet_id = 691 GROUP BY version ORDER BY version"""
        ).fetchall()
        unversioned = con.execute(
            "SELECT count(*) FROM items WHERE year = 2020 AND booklet_id <> ALL(?) "
            "AND version IS NOT NULL", [list(DIGITAL_BOOKLETS)]).fetchone()[0]
    finally:
        con.close()
    assert invalid == 0
    assert versions == [(0, 45, 45, 45), (1, 45, 45, 45)]
    assert unversioned == 0


# --- generated variants ---------------------------------------------------------------------

def test_abandoned_item_without_co_item_holds_its_position_2009(tmp_path):
    """A 2009 LC booklet: no TP_LINGUA column, one abandoned row with no CO_ITEM."""
    params = [(1.2, -0.5, 0.2), (0.9, 0.3, 0.15), None, (2.0, 1.1, 0.1), (1.5, 0.0, 0.25)]
    keys = ["A", "B", "X", "D", "E"]
    rows = [_item(101 + i, 5000 + i, keys[i], *params[i], 58, area="LC")
            for i in (0, 1, 3, 4)]
    rows.insert(2, _abandoned(103, 58))
    path = _write_items(tmp_path / "ITENS_PROVA_2009.csv", HEADER_2009, rows)
    items = load_items(path)
    assert items.invalid == {}
    form = items.form(58, 1)  # a 2009 LC booklet is one form, whatever the candidate's language
    assert (58, None) in items.forms and form.language is None
    assert form.item_ids.tolist() == [5000, 5001, missing_item_id(58, 103), 5003, 5004]
    assert np.isnan(form.bank.a[2]) and form.n_items == 5
    # All right: if the abandoned row did not take a character, D and E would be shifted.
    answers = "AB.DE"
    theta, se = _slow_theta(answers, list(zip(keys, params, strict=True)))
    got = _score_string(items, 58, answers, language=1)
    assert got[0] == pytest.approx(theta, abs=1e-9)
    assert got[1] == pytest.approx(se, abs=1e-9)
    shifted = _slow_theta("ABDE.", list(zip(keys, params, strict=True)))[0]
    assert abs(theta - shifted) > 0.1
    assert items.booklets().set_index("booklet_id").at[58, "n_abandoned"] == 1


def test_missing_co_item_on_a_scored_item_still_refuses_its_booklet(tmp_path):
    rows = [_item(1, 11, "A", 1.0, 0.0, 0.2, 70), _item(2, "", "B", 1.0, 0.5, 0.2, 70),
            _item(1, 21, "A", 1.0, 0.0, 0.2, 71), _abandoned(2, 71, area="MT")]
    items = load_items(_write_items(tmp_path / "items.csv", HEADER_2019, rows))
    assert list(items.invalid) == [70]
    assert "missing CO_ITEM on an item that is not abandoned" in items.invalid[70]
    assert items.form(71, None).item_ids.tolist() == [21, missing_item_id(71, 2)]


def test_spreadsheet_floats_read_as_the_integers_they_are(tmp_path):
    def rows(number):
        return [
            _item(number(5), number(60181), "C", 1.1, 0.2, 0.2, number(1062), area="LC",
                  TP_LINGUA=number(0), IN_ITEM_ABAN=number(0)),
            _item(number(5), number(60182), "D", 1.3, 0.4, 0.1, number(1062), area="LC",
                  TP_LINGUA=number(1), IN_ITEM_ABAN=number(0)),
            _item(number(6), number(60190), "A", 0.8, -0.2, 0.3, number(1062), area="LC",
                  IN_ITEM_ABAN=number(0), IN_ITEM_ADAPTADO=number(0)),
            _abandoned(number(7), number(1062), item_id=number(60191), IN_ITEM_ABAN=number(1)),
        ]

    floats = load_items(_write_items(tmp_path / "floats.csv", HEADER_2019,
                                     rows(lambda v: f"{v}.0")))
    plain = load_items(_write_items(tmp_path / "plain.csv", HEADER_2019, rows(str)))
    assert floats.invalid == plain.invalid == {}
    for language, first in ((0, 60181), (1, 60182)):
        form = floats.form(1062, language)
        assert form.item_ids.tolist() == [first, 60190, 60191]
        assert form.positions.tolist() == [5, 6, 7]
        assert form.language_items == 1
        assert np.isnan(form.bank.a[2])
        assert np.array_equal(form.bank.a, plain.form(1062, language).bank.a, equal_nan=True)
    assert floats.rows["adapted"].tolist() == plain.rows["adapted"].tolist()


def test_non_integral_float_refuses_its_booklet_with_the_reason(tmp_path):
    rows = [_item(1, "60181.5", "A", 1.0, 0.0, 0.2, 1062), _item(2, 60182, "B", 1, 0, 0.2, 1062),
            _item(1, "60183.0", "C", 1.0, 0.0, 0.2, 1063),
            _item("2.5", 60184, "D", 1.0, 0.0, 0.2, 1064)]
    items = load_items(_write_items(tmp_path / "items.csv", HEADER_2019, rows))
    assert sorted(items.invalid) == [1062, 1064]
    assert "CO_ITEM 60181.5 is not a whole number" in items.invalid[1062]
    assert "CO_POSICAO 2.5 is not a whole number" in items.invalid[1064]
    assert items.form(1063, None).item_ids.tolist() == [60183]


def _doubled_booklet(booklet, first_ids, second_ids, interleave=False):
    """2013 adapted-booklet style: every position listed twice, two different collections."""
    first = [_item(p + 1, first_ids[p], "ABCDE"[p], 1.0 + 0.3 * p, -0.4 + 0.35 * p, 0.2,
                   booklet, area="CH") for p in range(len(first_ids))]
    second = [_item(p + 1, second_ids[p], "EDCBA"[p], 2.2 - 0.2 * p, 0.8 - 0.3 * p, 0.1,
                    booklet, area="CH") for p in range(len(second_ids))]
    if interleave:
        return [row for pair in zip(first, second, strict=True) for row in pair]
    return first + second


def test_doubled_listing_scores_the_first_listed_collection_2013(tmp_path):
    rows = (_doubled_booklet(187, [101, 102, 103, 104, 105], [201, 202, 203, 204, 205])
            + _doubled_booklet(188, [301, 302, 303, 304, 305], [401, 402, 403, 404, 405],
                               interleave=True)
            + [_item(1, 501, "A", 1.0, 0.0, 0.2, 189, area="CH"),
               _item(1, 502, "B", 1.0, 0.0, 0.2, 189, area="CH"),
               _item(2, 503, "C", 1.0, 0.0, 0.2, 189, area="CH")])
    path = _write_items(tmp_path / "ITENS_PROVA_2013.csv", HEADER_2019, rows)
    items = load_items(path)
    assert items.form(187, None).item_ids.tolist() == [101, 102, 103, 104, 105]
    assert items.form(188, None).item_ids.tolist() == [301, 302, 303, 304, 305]
    assert items.notes == {187: DOUBLE_LISTING_NOTE, 188: DOUBLE_LISTING_NOTE}
    # Only some positions repeated: nothing to choose by, still refused.
    assert items.invalid == {189: "repeated CO_POSICAO"}
    first = [("ABCDE"[p], (1.0 + 0.3 * p, -0.4 + 0.35 * p, 0.2)) for p in range(5)]
    theta, _ = _slow_theta("ABD.E", first)
    assert _score_string(items, 187, "ABD.E")[0] == pytest.approx(theta, abs=1e-9)
    again = load_items(path)  # deterministic: the same choice on every read
    assert again.form(188, None).item_ids.tolist() == [301, 302, 303, 304, 305]

    db = tmp_path / "db.duckdb"
    ingest_items(db, 2013, path)
    con = open_reader(db)
    try:
        booklets = con.execute("SELECT booklet_id, valid, note FROM booklets ORDER BY 1").fetchall()
        unused = con.execute("SELECT list(item_id ORDER BY item_id) FROM items "
                             "WHERE booklet_id = 187 AND position IS NULL").fetchone()[0]
    finally:
        con.close()
    assert booklets == [(187, True, DOUBLE_LISTING_NOTE), (188, True, DOUBLE_LISTING_NOTE),
                        (189, False, None)]
    assert unused == [201, 202, 203, 204, 205]


def test_2010_columns_split_lc_by_language(tmp_path):
    """2010–2012: TP_LINGUA but no IN_ITEM_ADAPTADO; LC splits into two forms."""
    rows = [_item(91, 7001, "A", 1.0, 0.0, 0.2, 130, area="LC", TP_LINGUA=0),
            _item(91, 7002, "B", 1.4, 0.5, 0.1, 130, area="LC", TP_LINGUA=1),
            _item(96, 7003, "C", 0.9, -0.3, 0.2, 130, area="LC"),
            _abandoned(97, 130, item_id=7004)]
    items = load_items(_write_items(tmp_path / "ITENS_PROVA_2010.csv", HEADER_2010, rows))
    assert items.invalid == {}
    assert items.form(130, 0).item_ids.tolist() == [7001, 7003, 7004]
    assert items.form(130, 1).item_ids.tolist() == [7002, 7003, 7004]
    assert not items.rows["adapted"].any()
    theta, _ = _slow_theta("BC.", [("B", (1.4, 0.5, 0.1)), ("C", (0.9, -0.3, 0.2)), ("X", None)])
    assert _score_string(items, 130, "BC.", language=1)[0] == pytest.approx(theta, abs=1e-9)
    k, d = ENEM_K_D["LC"]
    assert _score_string(items, 130, "BC.", language=1)[2] == round(k * theta + d, 1)
    assert not math.isnan(theta)


def test_digital_version_listing_problems_refuse_the_booklet(tmp_path):
    header = HEADER_2019 + ("TP_VERSAO_DIGITAL",)
    rows = [
        # Version 1 serves Spanish candidates; an English item in it cannot be placed.
        _item(1, 1, "A", 1, 0, 0.2, 800, area="LC", TP_LINGUA=0, TP_VERSAO_DIGITAL=0),
        _item(1, 2, "A", 1, 0, 0.2, 800, area="LC", TP_LINGUA=0, TP_VERSAO_DIGITAL=1),
        # A version on some rows only.
        _item(1, 3, "A", 1, 0, 0.2, 801, area="LC", TP_LINGUA=0, TP_VERSAO_DIGITAL=0),
        _item(2, 4, "A", 1, 0, 0.2, 801, area="LC"),
        # A version code other than 0/1.
        _item(1, 5, "A", 1, 0, 0.2, 802, area="LC", TP_VERSAO_DIGITAL=2),
        # A good one: positions restart in each version.
        _item(1, 6, "A", 1, 0, 0.2, 803, area="LC", TP_LINGUA=0, TP_VERSAO_DIGITAL=0),
        _item(2, 7, "B", 1, 0, 0.2, 803, area="LC", TP_VERSAO_DIGITAL=0),
        _item(1, 8, "C", 1, 0, 0.2, 803, area="LC", TP_LINGUA=1, TP_VERSAO_DIGITAL=1),
        _item(2, 7, "B", 1, 0, 0.2, 803, area="LC", TP_VERSAO_DIGITAL=1),
    ]
    items = load_items(_write_items(tmp_path / "items.csv", header, rows))
    assert sorted(items.invalid) == [800, 801, 802]
    assert "other TP_LINGUA" in items.invalid[800]
    assert "some rows of the booklet only" in items.invalid[801]
    assert "TP_VERSAO_DIGITAL is not empty, 0 or 1" in items.invalid[802]
    assert items.form(803, 0).item_ids.tolist() == [6, 7]
    assert items.form(803, 1).item_ids.tolist() == [8, 7]


def test_forms_rebuilt_from_the_store_equal_the_files_forms(real_data, real_items_db, tmp_path):
    """What a model run and the dashboard read back (``load_form``, ``form_items``) is the form
    the item file defines, for every booklet and language of every real year, the 2020
    digital versions included, and for a doubly listed booklet."""
    con = open_reader(real_items_db)
    try:
        for year in REAL_YEARS:
            items = load_items(real_data / "items" / f"ITENS_PROVA_{year}.csv")
            for (booklet, language), form in items.forms.items():
                stored = load_form(con, year, booklet, language)
                assert stored.item_ids.tolist() == form.item_ids.tolist(), (year, booklet)
                listed = form_items(con, year, booklet, language)
                assert listed["item_id"].tolist() == form.item_ids.tolist(), (year, booklet)
                assert listed["position"].tolist() == list(range(1, form.n_items + 1))
    finally:
        con.close()
    path = _write_items(tmp_path / "ITENS_PROVA_2013.csv", HEADER_2019,
                        _doubled_booklet(187, [101, 102, 103, 104, 105],
                                         [201, 202, 203, 204, 205], interleave=True))
    db = tmp_path / "doubled.duckdb"
    ingest_items(db, 2013, path)
    con = open_reader(db)
    try:
        assert load_form(con, 2013, 187, None).item_ids.tolist() == [101, 102, 103, 104, 105]
        assert form_items(con, 2013, 187, None)["item_id"].tolist() == [101, 102, 103, 104, 105]
    finally:
        con.close()
