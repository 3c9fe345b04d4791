"""``item_score_counts``: per booklet form, candidates at each number correct and, per item, how
many of them were right. The stored rows of a small demo year equal a count made one candidate at
a time from the raw CSV files (the csv module, sharing no code with the ingest); the store's
tables equal ``analytics.items.fit.score_tables`` on the 0/1 matrix built here; an LC form is
read per language; a store made before the table reads as empty.

There is no test on real candidates: the shared real files (``../shared/data/real``) hold item
files and published model results, no microdata.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pandas as pd
import pytest

from analytics.items import fit
from enem.items import parse_items
from enem.score_tables import form_score_counts, form_score_frame
from store import item_queries
from store.connection import connected, writing
from store.layout import copy_store
from store.schema import YEAR_TABLES
from store.year_tables import clear_year
from tests.oracle_support import booklet_items, read_rows
from workflows.ingest import ingest_year

AREAS = ("CN", "CH", "LC", "MT")
MARKS = set("ABCDE.*")


def _counted(item: dict[str, str]) -> bool:
    """Whether the CTT score counts an item: it has parameters, is not abandoned, nor annulled."""
    return (item["NU_PARAM_A"] not in ("", None) and item["TX_GABARITO"] != "X"
            and item.get("IN_ITEM_ABAN", "0") not in ("1", "1.0"))


def _bilingual(items_rows, booklet: str) -> bool:
    return any(r["CO_PROVA"] == booklet and r.get("TP_LINGUA", "") not in ("", None)
               for r in items_rows)


def _answers(row: dict[str, str], area: str, n_items: int) -> str | None:
    """The candidate's string in form order, None when the ingest would reject it."""
    answers, language = row[f"TX_RESPOSTAS_{area}"], row.get("TP_LINGUA", "")
    if area == "LC" and len(answers) == n_items + 5:
        unchosen = answers[:5] if language == "1" else answers[5:10]
        if unchosen != "99999":
            return None
        answers = (answers[5:10] if language == "1" else answers[:5]) + answers[10:]
    if len(answers) != n_items or not set(answers) <= MARKS:
        return None
    return answers


def _raw_patterns(files) -> tuple[dict[tuple, list[list[int]]], dict[tuple, list[tuple]]]:
    """From the raw files, per form (area, booklet, language or None): the 0/1 rows over its
    counted items of its present, scoreable, not all-blank candidates, and its counted items
    as (position, item_id, key)."""
    items_rows = read_rows(files.items)
    forms: dict[tuple, tuple[list[tuple[int, int, str]], int]] = {}
    patterns: dict[tuple, list[list[int]]] = defaultdict(list)
    for row in read_rows(files.microdata):
        for area in AREAS:
            if row[f"TP_PRESENCA_{area}"] != "1" or not row[f"CO_PROVA_{area}"]:
                continue
            booklet = row[f"CO_PROVA_{area}"]
            language = row["TP_LINGUA"] if _bilingual(items_rows, booklet) else None
            if language not in (None, "0", "1"):
                continue
            key = (area, int(booklet), None if language is None else int(language))
            if key not in forms:
                form = booklet_items(items_rows, booklet, language)
                forms[key] = ([(position, int(item["CO_ITEM"]), item["TX_GABARITO"])
                               for position, item in enumerate(form, start=1)
                               if _counted(item)], len(form))
            counted, n_items = forms[key]
            answers = _answers(row, area, n_items)
            if answers is None or set(answers) == {"."}:
                continue
            patterns[key].append([int(answers[position - 1] == answer_key)
                                  for position, _, answer_key in counted])
    return patterns, {key: counted for key, (counted, _) in forms.items()}


@pytest.fixture(scope="module")
def raw(demo_files_2023):
    """The raw count: (patterns per form, counted (position, item_id, key) per form)."""
    return _raw_patterns(demo_files_2023)


def _expected_rows(raw) -> dict[tuple, tuple[int, int]]:
    """(area, booklet, language, item_id, position, score) → (n, correct), one candidate at a
    time; scores no candidate holds have no row."""
    patterns, forms = raw
    rows: dict[tuple, tuple[int, int]] = {}
    for key, form_patterns in patterns.items():
        n_by_score = Counter(sum(pattern) for pattern in form_patterns)
        right: Counter = Counter()
        for pattern in form_patterns:
            for index, mark in enumerate(pattern):
                right[index, sum(pattern)] += mark
        for index, (position, item_id, _) in enumerate(forms[key]):
            for score, n in n_by_score.items():
                rows[(*key, item_id, position, score)] = (n, right[index, score])
    return rows


def test_stored_rows_equal_a_count_from_the_raw_files(ingested_2023, demo_files_2023, raw):
    db, _ = ingested_2023
    with connected(db, read_only=True) as con:
        stored = con.execute(
            """SELECT area, booklet_id, item_language, item_id, position, score, n, correct
               FROM item_score_counts WHERE year = 2023""").fetchall()
    got = {(area, booklet, language, item_id, position, score): (n, correct)
           for area, booklet, language, item_id, position, score, n, correct in stored}
    assert len(got) == len(stored)  # one row per (form, item, score)
    expected = _expected_rows(raw)
    assert got == expected
    assert all(n > 0 for n, _ in got.values())
    # Every area and both LC languages are there; the demo's abandoned items are not.
    abandoned = {int(r["CO_ITEM"]) for r in read_rows(demo_files_2023.items) if not _counted(r)}
    assert abandoned and not abandoned & {key[3] for key in got}
    assert {key[0] for key in got} == set(AREAS)
    assert {key[2] for key in got if key[0] == "LC"} == {0, 1}
    assert {key[2] for key in got if key[0] != "LC"} == {None}


def test_the_score_is_the_stored_ctt_of_the_non_blank_candidates(ingested_2023):
    """n by score is the distribution of ``scores.ctt`` per form, all-blank tests left out."""
    db, _ = ingested_2023
    with connected(db, read_only=True) as con:
        from_scores = con.execute(
            """SELECT area, booklet_id, item_language, ctt, count(*) FROM scores
               WHERE year = 2023 AND NOT blank GROUP BY ALL""").fetchall()
        from_table = con.execute(
            """SELECT DISTINCT area, booklet_id, item_language, score, n FROM item_score_counts
               WHERE year = 2023""").fetchall()
        blank = con.execute("SELECT count(*) FROM scores WHERE year = 2023 AND blank").fetchone()
    assert sorted(from_table, key=str) == sorted(from_scores, key=str)
    assert blank[0] > 0  # the demo has all-blank tests, so leaving them out is tested


@pytest.mark.parametrize(("area", "language"), [("MT", None), ("CH", None), ("LC", 0),
                                                ("LC", 1)])
def test_store_tables_equal_the_analytics_helper(ingested_2023, raw, area, language):
    """``store.item_queries.score_tables`` of one form is ``analytics.items.fit.score_tables``
    of the form's 0/1 matrix (counted items, non-blank candidates), item for item."""
    patterns, forms = raw
    booklet = min(key[1] for key in patterns if key[0] == area and key[2] == language)
    key = (area, booklet, language)
    matrix = np.array(patterns[key], dtype=float)
    expected_counts, expected_correct = fit.score_tables(matrix)
    db, _ = ingested_2023
    with connected(db, read_only=True) as con:
        item_ids, counts, correct = item_queries.score_tables(con, 2023, area, booklet, language)
        rows = item_queries.item_score_counts(con, 2023, area, booklet, language)
    assert item_ids.tolist() == [item_id for _, item_id, _ in forms[key]]
    assert counts.shape == (len(item_ids) + 1,) and correct.shape == (len(item_ids),
                                                                      len(item_ids) + 1)
    np.testing.assert_array_equal(counts, expected_counts)
    np.testing.assert_array_equal(correct, expected_correct)
    assert list(rows.columns) == ["item_id", "position", "score", "n", "correct"]
    assert rows[["position", "score"]].equals(
        rows[["position", "score"]].sort_values(["position", "score"]))
    assert sorted(set(rows["position"])) == [position for position, _, _ in forms[key]]


def test_an_lc_form_is_read_per_language(ingested_2023, raw):
    patterns, forms = raw
    booklet = min(key[1] for key in patterns if key[0] == "LC")
    db, _ = ingested_2023
    with connected(db, read_only=True) as con:
        english = item_queries.score_tables(con, 2023, "LC", booklet, 0)[0]
        spanish = item_queries.score_tables(con, 2023, "LC", booklet, 1)[0]
        with pytest.raises(ValueError, match="item_language 0"):
            item_queries.item_score_counts(con, 2023, "LC", booklet)
        # Outside LC the language is ignored, as for the booklet's form.
        mt = min(key[1] for key in patterns if key[0] == "MT")
        assert item_queries.item_score_counts(con, 2023, "MT", mt, 1).equals(
            item_queries.item_score_counts(con, 2023, "MT", mt))
    # The five language items come first and differ; the common items are the same.
    assert english[:5].tolist() != spanish[:5].tolist()
    assert english[5:].tolist() == spanish[5:].tolist()
    assert english.tolist() == [item_id for _, item_id, _ in forms["LC", booklet, 0]]


def test_workers_and_batches_store_the_same_rows(tmp_path, ingested_2023, demo_files_2023):
    """Two scoring processes, records read 700 at a time (each form's candidates in several
    pieces): the same rows as the fixture's single process."""
    path = tmp_path / "workers.duckdb"
    ingest_year(path, 2023, demo_files_2023.microdata, demo_files_2023.items, progress=False,
                workers=2, batch_rows=700)
    rows = []
    for db in (ingested_2023[0], path):
        with connected(db, read_only=True) as con:
            rows.append(con.execute("SELECT * FROM item_score_counts ORDER BY ALL").fetchall())
    assert len(rows[0]) > 0 and rows[0] == rows[1]


def test_a_store_made_before_the_table_reads_empty(tmp_path, ingested_2023):
    path = tmp_path / "older.duckdb"
    copy_store(ingested_2023[0], path)
    with writing(path, year=2023) as con:
        booklet = con.execute("SELECT min(booklet_id) FROM item_score_counts WHERE area = 'MT'"
                              ).fetchone()[0]
        con.execute("DROP TABLE item_score_counts")
    with connected(path, read_only=True) as con:  # read-only: not upgraded
        rows = item_queries.item_score_counts(con, 2023, "MT", booklet)
        item_ids, counts, correct = item_queries.score_tables(con, 2023, "MT", booklet)
    assert rows.empty and list(rows.columns) == ["item_id", "position", "score", "n", "correct"]
    assert item_ids.shape == (0,) and counts.shape == (1,) and correct.shape == (0, 1)
    with writing(path, year=2023) as con:  # a writer of the year brings its schema up to date
        assert con.execute("SELECT count(*) FROM item_score_counts").fetchone()[0] == 0


def test_clearing_a_year_removes_its_rows(tmp_path, ingested_2023):
    path = tmp_path / "cleared.duckdb"
    copy_store(ingested_2023[0], path)
    assert "item_score_counts" in YEAR_TABLES
    with writing(path, year=2023) as con:
        assert con.execute("SELECT count(*) FROM item_score_counts").fetchone()[0] > 0
        clear_year(con, 2023)
        assert con.execute("SELECT count(*) FROM item_score_counts").fetchone()[0] == 0


# --- one form by hand --------------------------------------------------------------------------

def _hand_form():
    """A four-item MT booklet: item 2 annulled (key X, parameters given), item 4 abandoned
    (IN_ITEM_ABAN = 1, a key but no parameters); items 1 and 3 count."""
    header = ["CO_POSICAO", "SG_AREA", "CO_ITEM", "TX_GABARITO", "IN_ITEM_ABAN", "NU_PARAM_A",
              "NU_PARAM_B", "NU_PARAM_C", "CO_PROVA", "TX_COR"]
    rows = [[1, "MT", 11, "A", 0, 1.0, 0.0, 0.2], [2, "MT", 12, "X", 0, 1.0, 0.0, 0.2],
            [3, "MT", 13, "C", 0, 1.5, 0.5, 0.1], [4, "MT", 14, "D", 1, "", "", ""]]
    raw_rows = pd.DataFrame([[str(v) for v in row] + ["900", "AZUL"] for row in rows],
                            columns=header)
    return parse_items(raw_rows).form(900, None)


def _chars(strings: list[str]) -> np.ndarray:
    return np.frombuffer("".join(strings).encode(), np.uint8).reshape(len(strings), -1).copy()


def test_annulled_and_abandoned_items_have_no_rows_and_do_not_score():
    form = _hand_form()
    # Scores over items 1 and 3 only: "AXCD" is 2 (X is no mark anyone makes, D not counted),
    # "A.B*" 1, "*ACD" 1 ('*' is wrong), "...." left out (all blank), ".B.." 0.
    pieces = [_chars(["AXCD", "A.B*", "...."]), _chars(["*ACD", ".B.."])]
    frame = form_score_frame(2023, "MT", form, pieces, chunk_rows=2)
    assert frame[["item_id", "position", "score", "n", "correct"]].values.tolist() == [
        [11, 1, 0, 1, 0], [11, 1, 1, 2, 1], [11, 1, 2, 1, 1],
        [13, 3, 0, 1, 0], [13, 3, 1, 2, 1], [13, 3, 2, 1, 1]]
    assert frame["booklet_id"].eq(900).all() and frame["item_language"].isna().all()


def test_the_counts_do_not_depend_on_the_chunking():
    rng = np.random.default_rng(5)
    marks = np.frombuffer(b"ABCDE.*", np.uint8)
    pieces = [rng.choice(marks, size=(n, 9)) for n in (50, 1, 77)]
    pieces[0][3] = ord(".")  # an all-blank test
    keys = rng.choice(marks[:5], size=9)
    counted = np.ones(9, bool)
    counted[[2, 6]] = False
    once = form_score_counts(pieces, keys, counted, chunk_rows=1000)
    for chunk_rows in (1, 7, 50):
        by_chunks = form_score_counts(pieces, keys, counted, chunk_rows)
        np.testing.assert_array_equal(by_chunks[0], once[0])
        np.testing.assert_array_equal(by_chunks[1], once[1])
    matrix = (np.concatenate(pieces)[:, counted] == keys[counted]).astype(float)
    matrix = matrix[(np.concatenate(pieces) != ord(".")).any(axis=1)]
    expected = fit.score_tables(matrix)
    np.testing.assert_array_equal(once[0], expected[0])
    np.testing.assert_array_equal(once[1], expected[1])
    assert once[0].sum() == 127
