"""SQL of the paper's appendix tables: random-baseline patterns, item attributes (and their
corrections), and Min-K% Prob beside each item's accuracy. Model runs are selected like every
other model query (``store.model_sql.MODEL_FILTER``, series labels)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import duckdb
import pandas as pd

from store.model_sql import BASELINE_BACKEND, MODEL_FILTER, RUN_LABEL, SERIES, model_params

#: The backend of the random-choice baseline's runs (``inference/backends``).
RANDOM_BACKEND = BASELINE_BACKEND
#: ``item_attributes.source`` of a row a user corrected; re-derivation never overwrites it
#: (``store.question_texts.store_item_attributes``).
USER_SOURCE = "user"
ATTRIBUTE_COLUMNS = ("has_image", "numbers_in_statement", "numbers_in_options")


def random_baseline_patterns(con: duckdb.DuckDBPyConnection, year: int,
                             areas: Sequence[str], languages: Sequence[str]) -> pd.DataFrame:
    """Every scored pattern of the year's random-baseline runs (backend ``random``) in the given
    areas and prompt languages: series, run_id, area, prompt_language, shots, shuffle, ctt,
    n_scored, theta, lz."""
    return con.execute(
        f"""SELECT {RUN_LABEL} AS series, m.run_id, m.area, m.prompt_language, m.shots, m.shuffle,
                   m.ctt, m.n_scored, m.theta, m.lz
            FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE r.backend = $backend AND m.year = $year AND list_contains($areas, m.area)
              AND list_contains($languages, m.prompt_language)
            ORDER BY series, m.area, m.prompt_language, m.shots, m.shuffle""",
        {"backend": RANDOM_BACKEND, "year": int(year), "areas": [str(a) for a in areas],
         "languages": [str(language) for language in languages]},
    ).df()


def random_series(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Labels of the random-baseline runs (left out of the models' DI population)."""
    rows = con.execute(
        f"SELECT DISTINCT {RUN_LABEL} FROM model_runs r WHERE r.backend = ? ORDER BY 1",
        [RANDOM_BACKEND]).fetchall()
    return [str(row[0]) for row in rows]


def area_item_attributes(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """Every distinct item of an area with its stored attributes (NULL when none are stored):
    item_id, first_position, has_text (a question text is stored), has_image,
    numbers_in_statement, numbers_in_options, source ('derived', 'user' or NULL)."""
    return con.execute(
        """WITH area_items AS (
               SELECT item_id, min(co_posicao) AS first_position FROM items
               WHERE year = $year AND area = $area AND item_id IS NOT NULL GROUP BY item_id)
           SELECT i.item_id, i.first_position,
                  EXISTS (SELECT 1 FROM question_texts q
                          WHERE q.year = $year AND q.item_id = i.item_id) AS has_text,
                  a.has_image, a.numbers_in_statement, a.numbers_in_options, a.source
           FROM area_items i
           LEFT JOIN item_attributes a ON a.year = $year AND a.item_id = i.item_id
           ORDER BY i.first_position, i.item_id""",
        {"year": int(year), "area": area},
    ).df()


def items_with_texts(con: duckdb.DuckDBPyConnection, year: int) -> list[tuple[int, int]]:
    """(year, item_id) of every item of ``year`` with a stored question text."""
    rows = con.execute("SELECT DISTINCT year, item_id FROM question_texts WHERE year = ? "
                       "ORDER BY item_id", [int(year)]).fetchall()
    return [(int(y), int(i)) for y, i in rows]


def save_corrected_attributes(con: duckdb.DuckDBPyConnection,
                              rows: Iterable[tuple[int, int, bool, bool, bool]]) -> int:
    """Store (year, item_id, has_image, numbers_in_statement, numbers_in_options) rows as a
    user's corrections (source 'user', kept by every later derivation); returns rows written."""
    records = [(int(y), int(i), bool(a), bool(b), bool(c), USER_SOURCE)
               for y, i, a, b, c in rows]
    if records:
        con.executemany(
            """INSERT INTO item_attributes VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (year, item_id) DO UPDATE SET has_image = excluded.has_image,
                   numbers_in_statement = excluded.numbers_in_statement,
                   numbers_in_options = excluded.numbers_in_options, source = excluded.source""",
            records)
    return len(records)


def min_k_accuracy(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    language: str | None, shots: int | None, models: Sequence[str], k_percent: float,
    pooled: bool = False,
) -> pd.DataFrame:
    """Per run series, prompt language and item of an area: the share of its answers that were
    correct (all repetitions and runs of the series pooled, so the mean over repetitions) and
    the Min-K% Prob (Eq. 4's sign, ≥ 0) of that item's text in that language under the series'
    model.

    ``models`` are run labels; ``pooled`` names the series by model id (as every model query).
    Columns: model (the series), model_id, prompt_language, item_id, answers, accuracy, min_k.
    Only items with both values are returned.
    """
    params = model_params(year, area, booklet, language, shots, models, pooled)
    params["k"] = float(k_percent)
    return con.execute(
        f"""WITH accuracy AS (
                SELECT {SERIES} AS model, any_value(r.model_id) AS model_id, m.prompt_language,
                       m.item_id, count(*)::INTEGER AS answers,
                       avg(CASE WHEN m.correct THEN 1.0 ELSE 0.0 END) AS accuracy
                FROM model_responses m JOIN model_runs r USING (run_id)
                WHERE {MODEL_FILTER}
                GROUP BY model, m.prompt_language, m.item_id),
            min_k AS (
                -- abs: Eq. 4's sign (≥ 0) also for a file not yet written since the sign
                -- was fixed (it held the mean itself, ≤ 0; store.schema turns it round).
                SELECT model_id, item_id, language, avg(abs(value)) AS min_k FROM min_k_prob
                WHERE year = $year AND k_percent = $k GROUP BY ALL)
            SELECT a.model, a.model_id, a.prompt_language, a.item_id, a.answers, a.accuracy,
                   k.min_k
            FROM accuracy a JOIN min_k k ON k.model_id = a.model_id AND k.item_id = a.item_id
                 AND k.language = a.prompt_language
            WHERE k.min_k IS NOT NULL AND NOT isnan(k.min_k)
            ORDER BY a.model, a.prompt_language, a.item_id""",
        params,
    ).df()
