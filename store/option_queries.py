"""Queries of the Options and traps page: humans' option counts (in total and per θ bin, both
pre-aggregated at ingest), the options model runs chose and the lengths of question texts.

Model runs are selected with ``store.model_sql.MODEL_FILTER`` (see that module for the
meaning of the filter arguments); every user choice is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.model_sql import MODEL_FILTER, SERIES, model_params
from store.queries import table_names


def human_option_counts(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """Candidates per item and mark (A–E, '.' blank, '*' multiple) over every booklet of an
    area: item_id, option, n."""
    return con.execute(
        """SELECT item_id, option, sum(n)::BIGINT AS n FROM option_counts
           WHERE year = $year AND area = $area GROUP BY item_id, option
           ORDER BY item_id, option""",
        {"year": int(year), "area": area},
    ).df()


def human_option_theta_counts(con: duckdb.DuckDBPyConnection, year: int,
                              area: str) -> pd.DataFrame:
    """Candidates per item, θ bin and option letter A–E: item_id, theta_bin (lower edge), option,
    n. Empty for a year ingested before the table existed, or a file made before it (opened
    read-only, such a file is not upgraded)."""
    if "option_theta_counts" not in table_names(con):
        return pd.DataFrame({"item_id": pd.Series(dtype="int64"),
                             "theta_bin": pd.Series(dtype="float64"),
                             "option": pd.Series(dtype="object"),
                             "n": pd.Series(dtype="int64")})
    return con.execute(
        """SELECT item_id, theta_bin, option, sum(n)::BIGINT AS n FROM option_theta_counts
           WHERE year = $year AND area = $area AND option IN ('A', 'B', 'C', 'D', 'E')
           GROUP BY item_id, theta_bin, option ORDER BY item_id, theta_bin, option""",
        {"year": int(year), "area": area},
    ).df()


def model_option_answers(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    language: str | None, shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """Every answer of the selected runs in an area, one row per (run, item, prompt variant,
    repetition): model (the series: the run's label, or its model id when ``pooled``), run_id,
    item_id, position (its place in the booklet answered, 1 = first), prompt_language, shots,
    shuffle, permutation (the shown order as original letters, '?' where the source did not
    record the option shown there, NULL when no order was recorded), choice (the original
    letter, '.' or NULL for none) and correct."""
    return con.execute(
        f"""SELECT {SERIES} AS model, m.run_id, m.item_id, m.position, m.prompt_language,
                   m.shots, m.shuffle, m.permutation, m.choice, m.correct
            FROM model_responses m JOIN model_runs r USING (run_id)
            WHERE {MODEL_FILTER}
            ORDER BY model, m.run_id, m.item_id, m.prompt_language, m.shots, m.shuffle""",
        model_params(year, area, booklet, language, shots, models, pooled),
    ).df()


def question_lengths(con: duckdb.DuckDBPyConnection, year: int, area: str,
                     language: str) -> pd.DataFrame:
    """Lengths in characters of each stored question text of an area in one language: item_id,
    stem_chars, option_chars (the mean length of its five options). Annulled texts are left
    out."""
    return con.execute(
        """SELECT item_id, length(stem) AS stem_chars,
                  (length(option_a) + length(option_b) + length(option_c) + length(option_d)
                   + length(option_e)) / 5.0 AS option_chars
           FROM question_texts
           WHERE year = $year AND language = $language AND NOT coalesce(annulled, false)
             AND item_id IN (SELECT item_id FROM items WHERE year = $year AND area = $area)
           ORDER BY item_id""",
        {"year": int(year), "area": area, "language": language},
    ).df()
