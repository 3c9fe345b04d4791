"""The humans' option counts per θ bin that the ingest stores (``option_theta_counts``) equal a
brute-force count over every scored candidate of a small demo year, and sum to the stored
option totals (``option_counts``) over the candidates with a θ."""

from __future__ import annotations

from collections import Counter

import duckdb
import numpy as np
import pandas as pd

from enem.item_statistics import ICC_BIN_WIDTH
from store.connection import open_reader
from store.item_queries import form_items


def _brute_force(con: duckdb.DuckDBPyConnection, year: int) -> Counter:
    """(item_id, item_language, θ bin lower edge, mark) → candidates, one record at a time."""
    records = con.execute(
        """SELECT s.area, s.booklet_id, s.item_language, s.theta, r.responses
           FROM scores s JOIN area_records r
             ON r.year = s.year AND r.examinee_id = s.examinee_id AND r.area = s.area
           WHERE s.year = ?""", [year]).fetchall()
    forms, counts = {}, Counter()
    for _area, booklet, language, theta, responses in records:
        if (booklet, language) not in forms:
            form = form_items(con, year, booklet, None if language is None else int(language))
            forms[booklet, language] = list(zip(form["item_id"], form["item_language"],
                                                strict=True))
        if theta is None or np.isnan(theta):
            continue
        edge = round(float(np.floor(theta / ICC_BIN_WIDTH) * ICC_BIN_WIDTH), 6)
        text = responses if len(responses) == len(forms[booklet, language]) else None
        assert text is not None, "the demo year writes 45-character strings"
        for (item_id, item_language), mark in zip(forms[booklet, language], text, strict=True):
            lang = None if pd.isna(item_language) else int(item_language)
            counts[int(item_id), lang, edge, mark] += 1
    return counts


def test_option_counts_per_theta_bin_equal_a_brute_force_count(ingested_2023):
    db, _ = ingested_2023
    con = open_reader(db)
    try:
        expected = _brute_force(con, 2023)
        stored = con.execute(
            "SELECT item_id, item_language, theta_bin, option, n FROM option_theta_counts "
            "WHERE year = 2023").fetchall()
        got = Counter({(int(item), None if lang is None else int(lang), round(edge, 6), mark):
                       int(n) for item, lang, edge, mark, n in stored})
        assert len(stored) == len(got)  # one row per cell
        assert got == expected
        totals = {(int(item), mark): int(n) for item, mark, n in con.execute(
            "SELECT item_id, option, sum(n) FROM option_counts WHERE year = 2023 "
            "GROUP BY ALL").fetchall()}
    finally:
        con.close()
    summed = Counter()
    for (item, _, _, mark), n in got.items():
        summed[item, mark] += n
    assert {k: v for k, v in totals.items() if v} == dict(summed)
