"""The ingest's speed-ups change nothing stored: scoring areas in worker processes gives the
same rows in every table as scoring them in the ingesting process, and the item statistics
(computed with one θ sort per population) equal a direct evaluation of their definitions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from analytics.ctt import DISCRIMINATION_GROUP_FRACTION as DI_FRACTION
from analytics.ctt import discrimination_index, item_p_values, point_biserial
from enem.item_statistics import (
    CHUNK_ROWS,
    ICC_BIN_WIDTH,
    _ItemSums,
    area_item_frames,
)
from enem.score_batches import AreaAccumulator
from store.connection import open_reader
from store.schema import YEAR_PART_TABLES
from workflows.ingest import ingest_year

#: Every table an ingest writes (bench.ingest's --dump/--compare reads the same list).
TABLES = YEAR_PART_TABLES


def _rows(db, table):
    con = open_reader(db)
    try:
        return con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def ingested_both_ways(tmp_path_factory, demo_files_2023):
    folder = tmp_path_factory.mktemp("workers")
    dbs = {}
    for workers in (1, 2):
        dbs[workers] = folder / f"w{workers}.duckdb"
        summary = ingest_year(dbs[workers], 2023, demo_files_2023.microdata,
                              demo_files_2023.items, progress=False, workers=workers)
        dbs[workers, "summary"] = [line for line in summary.lines() if "ingested in" not in line]
    return dbs


@pytest.mark.parametrize("table", TABLES)
def test_worker_processes_store_the_same_rows(ingested_both_ways, table):
    one, two = _rows(ingested_both_ways[1], table), _rows(ingested_both_ways[2], table)
    assert len(one) == len(two) > 0 or table == "rejects"
    assert one == two


def test_worker_processes_give_the_same_summary(ingested_both_ways):
    assert ingested_both_ways[1, "summary"] == ingested_both_ways[2, "summary"]


@pytest.mark.parametrize("chunk_rows", [7, 256, CHUNK_ROWS])
def test_item_statistics_match_their_definitions(chunk_rows):
    """Two forms sharing some items (so some candidates lack some items), ties in θ; chunks
    that end inside θ bins."""
    rng = np.random.default_rng(5)

    class Form:
        def __init__(self, ids, keys):
            self.item_ids, self.keys, self.language, self.language_items = ids, keys, None, 0

    marks = np.frombuffer(b"ABCDE.*", np.uint8)
    forms = {(1, None): Form(np.array([10, 11, 12, 13]), np.frombuffer(b"ABCD", np.uint8)),
             (2, None): Form(np.array([12, 13, 14]), np.frombuffer(b"CDE", np.uint8))}

    class Items:
        pass

    items = Items()
    items.forms = forms
    accumulator = AreaAccumulator()
    for key, form in forms.items():
        for n in (500, 300):
            accumulator.chars[key].append(rng.choice(marks, size=(n, len(form.item_ids))))
            accumulator.theta[key].append(np.round(rng.normal(size=n), 1))
            accumulator.ctt[key].append(rng.integers(0, 4, n).astype(float))
    frames = area_item_frames(2023, "MT", items, accumulator, chunk_rows=chunk_rows)

    ids = np.array([10, 11, 12, 13, 14])
    keys = np.frombuffer(b"ABCDE", np.uint8)
    chars = np.zeros((1600, 5), np.uint8)
    chars[:800, :4] = np.concatenate(accumulator.chars[1, None])
    chars[800:, 2:] = np.concatenate(accumulator.chars[2, None])
    theta = np.concatenate(accumulator.theta[1, None] + accumulator.theta[2, None])
    total = np.concatenate(accumulator.ctt[1, None] + accumulator.ctt[2, None])
    responses = (chars == keys).astype(float)
    responses[chars == 0] = np.nan
    stats = frames["item_stats"].sort_values("item_id")
    assert stats["item_id"].tolist() == ids.tolist()
    np.testing.assert_array_equal(stats["n"], (chars != 0).sum(axis=0))
    np.testing.assert_array_equal(stats["p_value"], item_p_values(responses))
    np.testing.assert_array_equal(stats["di"], discrimination_index(responses, theta))
    np.testing.assert_allclose(stats["point_biserial"], point_biserial(responses, total),
                               rtol=1e-12)
    icc = frames["item_icc"].set_index(["item_id", "theta_bin"]).sort_index()
    bins = np.floor(theta / ICC_BIN_WIDTH) * ICC_BIN_WIDTH
    expected = {}
    for j, item in enumerate(ids):
        for edge in np.unique(bins):
            rows = (bins == edge) & (chars[:, j] != 0)
            if rows.any():
                expected[int(item), float(edge)] = (int(rows.sum()),
                                                    int((chars[rows, j] == keys[j]).sum()))
    assert {k: (int(v["n"]), int(v["n_correct"])) for k, v in icc.iterrows()} == expected
    options = frames["option_counts"].set_index(["item_id", "option"])["n"]
    for j, item in enumerate(ids):
        for mark in "ABCDE.*":
            assert options[int(item), mark] == int((chars[:, j] == ord(mark)).sum())


def test_point_biserial_is_exact_to_rounding_on_a_large_population():
    """200,000 candidates of one 45-item form: each corrected point-biserial equals the one
    worked out in rational arithmetic from integer sums to 1e-14."""
    rng = np.random.default_rng(11)
    n, n_items = 200_000, 45
    ability = rng.normal(size=n)
    difficulty = rng.normal(size=n_items)
    right = rng.random((n, n_items)) < 1 / (1 + np.exp(difficulty[None, :] - ability[:, None]))
    answer_key = np.full(n_items, ord("A"), np.uint8)
    chars = np.where(right, ord("A"), ord("B")).astype(np.uint8)
    total = right.sum(axis=1).astype(float)

    class Form:
        item_ids, keys = np.arange(100, 100 + n_items), answer_key
        language, language_items = None, 0

    class Items:
        def __init__(self):
            self.forms = {(1, None): Form()}

    accumulator = AreaAccumulator()
    accumulator.chars[1, None].append(chars)
    accumulator.theta[1, None].append(ability)
    accumulator.ctt[1, None].append(total)
    got = area_item_frames(2023, "MT", Items(), accumulator)["item_stats"]["point_biserial"]

    t = total.astype(np.int64)
    sum_t, sum_tt = int(t.sum()), int((t * t).sum())
    expected = []
    for j in range(n_items):
        x = right[:, j]
        sum_x, sum_xt = int(x.sum()), int(t[x].sum())
        sum_y, sum_yy, sum_xy = sum_t - sum_x, sum_tt - 2 * sum_xt + sum_x, sum_xt - sum_x
        cov = Fraction(sum_xy, n) - Fraction(sum_x, n) * Fraction(sum_y, n)
        var_x = Fraction(sum_x, n) - Fraction(sum_x, n) ** 2
        var_y = Fraction(sum_yy, n) - Fraction(sum_y, n) ** 2
        expected.append(float(cov) / math.sqrt(float(var_x * var_y)))
    np.testing.assert_allclose(got.to_numpy(), expected, rtol=0, atol=1e-14)


def test_weighted_sums_are_exact_integers_whatever_the_totals():
    """The per-chunk products run in float32, exact only below 2**24: totals up to 250 (far
    more than a test has items) over 70,000 candidates, some of whose forms lack an item,
    still give the integer sums exactly."""
    rng = np.random.default_rng(12)
    n, n_items = 70_000, 3
    chars = rng.choice(np.frombuffer(b"ABCDE", np.uint8), size=(n, n_items))
    chars[rng.random((n, n_items)) < 0.1] = 0  # the item was not in the candidate's form
    keys = np.frombuffer(b"ABC", np.uint8).copy()
    total = rng.integers(0, 251, n).astype(float)
    sums = _ItemSums.gather(chars, keys, rng.normal(size=n), total, DI_FRACTION, CHUNK_ROWS)
    t, shift = total.astype(np.int64), total.mean()
    for j in range(n_items):
        answered, right = chars[:, j] != 0, chars[:, j] == keys[j]
        count, sum_x = float(answered.sum()), float(right.sum())
        sum_t, sum_tt = float(t[answered].sum()), float((t[answered] ** 2).sum())
        expected = (count, sum_x, sum_x, sum_t - shift * count,
                    sum_tt - 2 * shift * sum_t + shift**2 * count,
                    float(t[right].sum()) - shift * sum_x)
        assert [float(moment[j]) for moment in sums.moments] == list(expected)
