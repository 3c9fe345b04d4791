"""SQL behind the Response patterns figure (the paper's Fig. 2). Read-only, bound parameters.

The figure places every selected run series' answers in one area on the items of one booklet:
booklets of an area hold the same items (``CO_ITEM`` = ``item_id``) in another order, so a
model's answers to the booklet it took are mapped onto any booklet of its area and year through
the item ids. Both prompt languages are read at once (rows are model × prompt language).

Rows are chosen with :data:`store.model_sql.MODEL_FILTER` (no booklet, both languages):
``models`` lists the selected runs' labels
(``coalesce(model_runs.label, model_id)``, an empty list selects none), ``pooled`` True names
each row by its model instead of its run; ``shots`` None means
every number of shots, and runs stored without a count (the paper's ``few-shot``) match every
setting.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.model_sql import MODEL_FILTER, SERIES, model_params


def _params(year: int, area: str, shots: int | None, models: Sequence[str],
            pooled: bool | None = None) -> dict:
    """MODEL_FILTER's parameters for one area, every booklet and both prompt languages (and
    SERIES's when ``pooled`` is given)."""
    return model_params(year, area, None, None, shots, models, pooled)


def pattern_items(con: duckdb.DuckDBPyConnection, year: int, booklet: int) -> pd.DataFrame:
    """The items of one booklet with their difficulty and the humans' share correct.

    One row per item (``item_id``; LC holds both foreign-language blocks, ``item_language``
    0 English / 1 Spanish, NULL for the common items), ordered by question number. Columns:
    item_id, item_language, co_posicao (question number in this booklet), a, b (NaN for
    abandoned items), abandoned, p_value (share of the candidates who saw the item that answered
    it correctly, pooled over every booklet: ``item_stats``; NaN without candidates), humans
    (how many candidates that share is over, 0 without candidates).
    """
    return con.execute(
        """WITH booklet_items AS (
               SELECT item_id, any_value(item_language) AS item_language,
                      min(co_posicao)::INTEGER AS co_posicao, any_value(a) AS a,
                      any_value(b) AS b, bool_or(coalesce(abandoned, false)) AS abandoned
               FROM items
               WHERE year = $year AND booklet_id = $booklet AND position IS NOT NULL
               GROUP BY item_id)
           SELECT i.item_id, i.item_language, i.co_posicao, i.a, i.b, i.abandoned,
                  s.p_value, coalesce(s.n, 0)::BIGINT AS humans
           FROM booklet_items i
           LEFT JOIN item_stats s
             ON s.year = $year AND s.item_id = i.item_id
            AND s.item_language IS NOT DISTINCT FROM i.item_language
           ORDER BY i.co_posicao, i.item_language NULLS FIRST, i.item_id""",
        {"year": int(year), "booklet": int(booklet)},
    ).df()


def pattern_booklets(
    con: duckdb.DuckDBPyConnection, year: int, area: str, shots: int | None,
    models: Sequence[str],
) -> pd.DataFrame:
    """The booklets the selected series took in an area, most response patterns first.

    Columns: booklet_id, colour, patterns (scored response patterns on that booklet).
    """
    return con.execute(
        f"""SELECT m.booklet_id, any_value(b.colour) AS colour,
                   count(*)::INTEGER AS patterns
            FROM model_scores m JOIN model_runs r USING (run_id)
            LEFT JOIN booklets b ON b.year = m.year AND b.booklet_id = m.booklet_id
            WHERE {MODEL_FILTER}
            GROUP BY m.booklet_id ORDER BY patterns DESC, m.booklet_id""",
        _params(year, area, shots, models),
    ).df()


def pattern_cells(
    con: duckdb.DuckDBPyConnection, year: int, area: str, shots: int | None,
    models: Sequence[str], per_repetition: bool = False, pooled: bool = False,
) -> pd.DataFrame:
    """How often each row of the figure answered each item, and how often correctly.

    A row is a run series × prompt language (``per_repetition`` False: every run, shot setting
    and repetition of the series pooled), or one repetition of one run (``per_repetition``
    True: run_id and shuffle, the shuffle or seed index). Columns: model (the series),
    prompt_language, run_id and shuffle (NULL when pooled), item_id, answers, correct.
    """
    params = _params(year, area, shots, models, pooled)
    params["expand"] = bool(per_repetition)
    return con.execute(
        f"""SELECT {SERIES} AS model, m.prompt_language,
                   CASE WHEN $expand THEN m.run_id END AS run_id,
                   CASE WHEN $expand THEN m.shuffle END AS shuffle,
                   m.item_id, count(*)::INTEGER AS answers,
                   sum(CASE WHEN m.correct THEN 1 ELSE 0 END)::INTEGER AS correct
            FROM model_responses m JOIN model_runs r USING (run_id)
            WHERE {MODEL_FILTER}
            GROUP BY ALL
            ORDER BY model, m.prompt_language, run_id, shuffle, m.item_id""",
        params,
    ).df()


def pattern_fit(
    con: duckdb.DuckDBPyConnection, year: int, area: str, shots: int | None,
    models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """Every scored response pattern of the selected series in an area (both languages).

    Columns: model (the series), prompt_language, run_id, shots, shuffle, booklet_id,
    item_language, theta, lz (NaN where l_z is undefined).
    """
    return con.execute(
        f"""SELECT {SERIES} AS model, m.prompt_language, m.run_id, m.shots, m.shuffle,
                   m.booklet_id, m.item_language, m.theta, m.lz
            FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE {MODEL_FILTER}
            ORDER BY model, m.prompt_language, m.run_id, m.shots, m.shuffle""",
        _params(year, area, shots, models, pooled),
    ).df()
