"""Humans' item correctness by summed score per booklet form (``item_score_counts``, stored at
ingest by ``enem/score_tables.py``): the data of item fit (S-X²) and Mantel–Haenszel DIF.

A form is a booklet and, in LC, the candidates' foreign language (``item_language`` 0 English,
1 Spanish); outside LC the language is ignored, as ``enem.items.ItemsTable.form`` does. Only
the items the CTT score counts have rows (abandoned and annulled items have none), so the
tables below have exactly the shapes ``analytics.items.fit.score_tables`` returns.

The same form's answer strings with one background column (:func:`form_group_responses`) let
``workflows.items.group_dif`` build these tables per group of candidates (sex, school type,
state) for DIF between human groups.
"""

from __future__ import annotations

from typing import NamedTuple

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from enem.areas import AREAS
from store.connection import one_row
from store.queries import table_names

_COLUMNS = {"item_id": "int64", "position": "int16", "score": "int16", "n": "int64",
            "correct": "int64"}


def item_score_counts(con: duckdb.DuckDBPyConnection, year: int, area: str, booklet_id: int,
                      item_language: int | None = None) -> pd.DataFrame:
    """The stored rows of one form: item_id, position (1-based place in the answer string),
    score (number correct), n (candidates with that score), correct (of them, right on the
    item), ordered by position and score.

    Scores no candidate holds have no rows. Empty (with these columns) for a store made
    before the table existed, or a year ingested before it.

    Raises
    ------
    ValueError
        If the booklet is an LC booklet with languages and ``item_language`` is None.
    """
    if "item_score_counts" not in table_names(con):
        return _empty()
    params = {"year": int(year), "area": area, "booklet": int(booklet_id),
              "language": None if item_language is None else int(item_language)}
    rows = con.execute(
        """SELECT item_id, position, score, n, correct FROM item_score_counts
           WHERE year = $year AND area = $area AND booklet_id = $booklet
             AND (item_language IS NULL OR item_language = $language)
           ORDER BY position, score""",
        params,
    ).df()
    if rows.empty:
        if item_language is None and _has_languages(con, params):
            raise ValueError(f"booklet {booklet_id} of {year} {area} has one form per "
                             "language: give item_language 0 (English) or 1 (Spanish)")
        return _empty()
    return rows.astype(_COLUMNS)


def score_tables(con: duckdb.DuckDBPyConnection, year: int, area: str, booklet_id: int,
                 item_language: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One form's counts in the format of ``analytics.items.fit.score_tables``.

    Returns
    -------
    item_ids : (k,) int64
        The form's counted items (CO_ITEM) in booklet position order.
    score_counts : (k + 1,) float64
        Candidates at each number correct s = 0 … k (0 where none).
    correct_by_score : (k, k + 1) float64
        Entry [i, s]: those of score s right on item i.

    k = 0 (shapes (0,), (1,) and (0, 1)) when the store holds no rows of the form.
    """
    rows = item_score_counts(con, year, area, booklet_id, item_language)
    item_ids = rows.drop_duplicates("position")["item_id"].to_numpy(np.int64)
    n_items = len(item_ids)
    item_index = rows["position"].rank(method="dense").to_numpy(np.intp) - 1
    scores = rows["score"].to_numpy(np.intp)
    correct_by_score = np.zeros((n_items, n_items + 1))
    correct_by_score[item_index, scores] = rows["correct"].to_numpy(np.float64)
    score_counts = np.zeros(n_items + 1)
    # n is the same on every item's row of a score: take one.
    score_counts[scores] = rows["n"].to_numpy(np.float64)
    return item_ids, score_counts, correct_by_score


def _has_languages(con: duckdb.DuckDBPyConnection, params: dict) -> bool:
    return bool(one_row(con.execute(
        """SELECT count(*) > 0 FROM item_score_counts
           WHERE year = $year AND area = $area AND booklet_id = $booklet
             AND item_language IS NOT NULL""",
        {key: params[key] for key in ("year", "area", "booklet")},
    ))[0])


def _empty() -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in _COLUMNS.items()})


#: Groupings of candidates a DIF between human groups may compare → their ``examinees``
#: column. The SQL names a column only through this table, never through the caller's text.
DIF_GROUP_COLUMNS: dict[str, str] = {"sex": "sex", "school_type": "school_type", "state": "state"}
#: Area → the suffix of its ``examinees`` columns (``responses_mt``, …).
_AREA_SUFFIX: dict[str, str] = {area: area.lower() for area in AREAS}


def form_group_responses(con: duckdb.DuckDBPyConnection, year: int, area: str, booklet_id: int,
                         item_language: int | None, grouping: str,
                         batch_rows: int) -> pa.RecordBatchReader:
    """The answer strings of one form's candidates with one background column, streamed.

    Arrow batches of at most ``batch_rows`` rows with columns responses (the raw string: 45
    characters, or 50 for an LC layout with both language blocks), language (TP_LINGUA) and
    group_value (the ``grouping`` column as text: 'F', '2', 'SP'; null where the candidate
    has none). ``grouping`` is a key of :data:`DIF_GROUP_COLUMNS`.

    The candidates are exactly those ``item_score_counts`` counts: present (presence = 1) with
    a string, scored on this form (a row in ``scores``: the ingest rejected the others) and not
    all blank. Outside LC the language is ignored, as in :func:`item_score_counts`.

    Raises
    ------
    ValueError
        If ``grouping`` or ``area`` is unknown, or the booklet is an LC booklet with languages
        and ``item_language`` is None.
    """
    if grouping not in DIF_GROUP_COLUMNS:
        raise ValueError(f"unknown grouping {grouping!r}: one of {', '.join(DIF_GROUP_COLUMNS)}")
    if area not in _AREA_SUFFIX:
        raise ValueError(f"unknown area {area!r}")
    params = {"year": int(year), "area": area, "booklet": int(booklet_id),
              "language": None if item_language is None else int(item_language)}
    if area == "LC" and item_language is None and _has_scored_languages(con, params):
        raise ValueError(f"booklet {booklet_id} of {year} {area} has one form per language: "
                         "give item_language 0 (English) or 1 (Spanish)")
    suffix, column = _AREA_SUFFIX[area], DIF_GROUP_COLUMNS[grouping]
    # The booklet filter on examinees first, then a semi-join on the form's score rows: joining
    # scores to every examinee of the year takes several times longer on a full-size year.
    return con.sql(
        f"""SELECT e.responses_{suffix} AS responses, e.language,
                   CAST(e.{column} AS VARCHAR) AS group_value
            FROM examinees e
            WHERE e.year = $year AND e.booklet_{suffix} = $booklet AND e.presence_{suffix} = 1
              AND e.responses_{suffix} IS NOT NULL
              AND e.examinee_id IN (
                  SELECT examinee_id FROM scores
                  WHERE year = $year AND area = $area AND booklet_id = $booklet
                    AND (item_language IS NULL OR item_language = $language)
                    AND NOT coalesce(blank, false))""",
        params=params,
    ).to_arrow_reader(batch_rows)


def _has_scored_languages(con: duckdb.DuckDBPyConnection, params: dict) -> bool:
    return con.execute(
        """SELECT 1 FROM scores
           WHERE year = $year AND area = $area AND booklet_id = $booklet
             AND item_language IS NOT NULL LIMIT 1""",
        {key: params[key] for key in ("year", "area", "booklet")},
    ).fetchone() is not None


def item_icc_bins(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """The humans' empirical item characteristic curves of every item of an area: item_id,
    theta_bin (lower edge), n (candidates whose form held the item), n_correct; pooled over
    booklets and, for LC's common items, languages."""
    return con.execute(
        """SELECT item_id, theta_bin, sum(n)::BIGINT AS n, sum(n_correct)::BIGINT AS n_correct
           FROM item_icc WHERE year = $year AND area = $area
           GROUP BY item_id, theta_bin ORDER BY item_id, theta_bin""",
        {"year": int(year), "area": area},
    ).df()


class ThetaMoments(NamedTuple):
    """A booklet's scored candidates (all-blank tests left out): how many, the mean and sample
    variance of their θ estimates, and the mean of their SE(θ)²."""

    candidates: int
    mean: float
    variance: float
    mean_se2: float

    @property
    def latent_sd(self) -> float:
        """sqrt(var(θ̂) + mean SE²): the spread of the abilities behind shrunken EAPs."""
        return float(np.sqrt(self.variance + self.mean_se2))

    @property
    def empirical_reliability(self) -> float:
        """var(θ̂) / (var(θ̂) + mean SE²), as ``analytics.reliability.empirical_reliability``."""
        total = self.variance + self.mean_se2
        return float(self.variance / total) if total > 0 else float("nan")


def booklet_theta_moments(con: duckdb.DuckDBPyConnection, year: int, area: str,
                          booklet_id: int, item_language: int | None) -> ThetaMoments:
    """The θ moments of one form's scored candidates (NaN without candidates): the booklet's
    and, in LC, those of one foreign language (``item_language`` 0 English, 1 Spanish; ignored
    outside LC). The English and Spanish takers of an LC booklet answer different items and
    are different groups, so their moments are never pooled.

    Raises
    ------
    ValueError
        If the booklet has one form per language and ``item_language`` is None.
    """
    params = {"year": int(year), "area": area, "booklet": int(booklet_id),
              "language": None if item_language is None else int(item_language)}
    if area == "LC" and item_language is None and _has_scored_languages(con, params):
        raise ValueError(f"booklet {booklet_id} of {year} {area} has one form per language: "
                         "give item_language 0 (English) or 1 (Spanish)")
    n, mean, variance, error = one_row(con.execute(
        """SELECT count(*), avg(theta), var_samp(theta), avg(theta_se * theta_se) FROM scores
           WHERE year = $year AND area = $area AND booklet_id = $booklet
             AND (item_language IS NULL OR item_language = $language)
             AND NOT coalesce(blank, false) AND isfinite(theta)""",
        params,
    ))
    nan = float("nan")
    return ThetaMoments(int(n or 0), nan if mean is None else float(mean),
                        nan if variance is None else float(variance),
                        nan if error is None else float(error))


def area_stems(con: duckdb.DuckDBPyConnection, year: int, area: str, language: str
               ) -> pd.DataFrame:
    """The stored question stems of an area's items in one language: item_id, stem."""
    return con.execute(
        """SELECT DISTINCT q.item_id, q.stem FROM question_texts q
           WHERE q.year = $year AND q.language = $language
             AND q.item_id IN (SELECT item_id FROM items WHERE year = $year AND area = $area)
           ORDER BY q.item_id""",
        {"year": int(year), "area": area, "language": language},
    ).df()


def item_option_theta_counts(con: duckdb.DuckDBPyConnection, year: int,
                             item_id: int) -> pd.DataFrame:
    """The humans' marks on one item per θ bin (``option_theta_counts``): theta_bin (lower
    edge), option (A–E, '.' blank, '*' several), n; pooled over booklets and languages. Empty
    for a store made before the table existed."""
    if "option_theta_counts" not in table_names(con):
        return pd.DataFrame({"theta_bin": pd.Series(dtype=float),
                             "option": pd.Series(dtype=object), "n": pd.Series(dtype="int64")})
    return con.execute(
        """SELECT theta_bin, option, sum(n)::BIGINT AS n FROM option_theta_counts
           WHERE year = $year AND item_id = $item
           GROUP BY theta_bin, option ORDER BY theta_bin, option""",
        {"year": int(year), "item": int(item_id)},
    ).df()


# ---------------------------------------------------------------------------------------------
# A year's items and booklet forms, and one item in full (the Item explorer)


def main_booklet(con: duckdb.DuckDBPyConnection, year: int, area: str) -> int | None:
    """The valid booklet of an area taken by the most candidates (ties: lowest id)."""
    row = con.execute(
        """SELECT b.booklet_id FROM booklets b
           LEFT JOIN (SELECT booklet_id, sum(n) AS n FROM agg_theta_ctt
                      WHERE year = $year AND area = $area AND group_kind = 'all'
                      GROUP BY booklet_id) c USING (booklet_id)
           WHERE b.year = $year AND b.area = $area AND b.valid
           ORDER BY coalesce(c.n, 0) DESC, b.booklet_id LIMIT 1""",
        {"year": int(year), "area": area},
    ).fetchall()
    return int(row[0][0]) if row else None


def form_items(
    con: duckdb.DuckDBPyConnection, year: int, booklet: int, item_language: int | None
) -> pd.DataFrame:
    """The items of one booklet form in string order (LC: common items plus one language; a
    2020 digital LC booklet: the version of that language; unscored second listings left out).

    Columns: position, co_posicao, item_id, item_language, key, skill, a, b, c, abandoned.
    """
    return con.execute(
        """SELECT row_number() OVER (ORDER BY co_posicao)::INTEGER AS position, co_posicao,
                  item_id, item_language, key, skill, a, b, c, abandoned
           FROM items
           WHERE year = $year AND booklet_id = $booklet AND position IS NOT NULL
             AND (item_language IS NULL OR item_language = $language)
             AND (version IS NULL OR version = $language)
           ORDER BY co_posicao""",
        {"year": int(year), "booklet": int(booklet), "language": item_language},
    ).df()


def area_items(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """Every distinct item of an area with parameters and human statistics.

    Columns: item_id, item_language, key, skill, a, b, c, abandoned, adapted, first_position
    (its lowest position in any booklet), p_value, point_biserial, di, n (humans who saw it).
    """
    return con.execute(
        """WITH distinct_items AS (
               SELECT item_id, any_value(item_language) AS item_language, any_value(key) AS key,
                      any_value(skill) AS skill, any_value(a) AS a, any_value(b) AS b,
                      any_value(c) AS c, bool_or(abandoned) AS abandoned,
                      bool_or(adapted) AS adapted, min(co_posicao) AS first_position
               FROM items WHERE year = $year AND area = $area GROUP BY item_id)
           SELECT d.*, s.p_value, s.point_biserial, s.di, s.n
           FROM distinct_items d
           LEFT JOIN item_stats s ON s.year = $year AND s.area = $area AND s.item_id = d.item_id
           ORDER BY d.first_position, d.item_id""",
        {"year": int(year), "area": area},
    ).df()


def item_record(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """The rows of ``items`` for one item (one per booklet): booklet, position, parameters."""
    return con.execute(
        """SELECT booklet_id, area, item_language, co_posicao, colour, key, skill, a, b, c,
                  abandoned, abandon_reason, adapted
           FROM items WHERE year = $year AND item_id = $item ORDER BY booklet_id""",
        {"year": int(year), "item": int(item_id)},
    ).df()


def item_texts(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """Stored question texts of one item, one row per language."""
    return con.execute(
        """SELECT language, stem, option_a, option_b, option_c, option_d, option_e, key,
                  annulled, source
           FROM question_texts WHERE year = $year AND item_id = $item ORDER BY language""",
        {"year": int(year), "item": int(item_id)},
    ).df()


def item_icc(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """Human empirical proportion correct per θ bin: theta_bin (lower edge), n, n_correct."""
    return con.execute(
        """SELECT theta_bin, sum(n)::BIGINT AS n, sum(n_correct)::BIGINT AS n_correct
           FROM item_icc WHERE year = $year AND item_id = $item
           GROUP BY theta_bin ORDER BY theta_bin""",
        {"year": int(year), "item": int(item_id)},
    ).df()


def item_option_counts(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """How many humans marked each option (A–E, '.' blank, '*' multiple): option, n."""
    return con.execute(
        """SELECT option, sum(n)::BIGINT AS n FROM option_counts
           WHERE year = $year AND item_id = $item GROUP BY option ORDER BY option""",
        {"year": int(year), "item": int(item_id)},
    ).df()
