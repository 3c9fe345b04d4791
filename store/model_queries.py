"""The selected runs' response patterns and answers the pages draw: one row per pattern with
its scores, per item how often each series was right, which option it chose, and the long
pattern × item matrix of the discrimination indices. Runs are chosen with
:data:`store.model_sql.MODEL_FILTER` (its module states the filter arguments). Read-only; every
value is a bound parameter."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.model_sql import (
    BASELINE_BACKEND,
    MODEL_FILTER,
    PATTERN_JOIN,
    RUN_LABEL,
    SERIES,
    model_params,
)


def baseline_series(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every series name that is a baseline (``store.model_sql.BASELINE_BACKEND``), sorted:
    the label of each baseline run, and the model id of the models whose runs are all
    baselines (the series name of their runs pooled). A selection's series is a baseline when
    its name is in this list."""
    rows = con.execute(
        f"""SELECT DISTINCT {RUN_LABEL} FROM model_runs r WHERE r.backend = $backend
            UNION
            SELECT r.model_id FROM model_runs r GROUP BY r.model_id
            HAVING bool_and(r.backend = $backend)
            ORDER BY 1""", {"backend": BASELINE_BACKEND}).fetchall()
    return [str(row[0]) for row in rows]


def model_booklet(
    con: duckdb.DuckDBPyConnection, year: int, area: str, language: str | None,
    shots: int | None, models: Sequence[str], booklet: int | None = None,
) -> int | None:
    """The booklet the selected series answered most often in an area (ties: lowest id); None
    when they answered none there. With ``booklet``, only booklets holding its items count."""
    row = con.execute(
        f"""SELECT m.booklet_id FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE {MODEL_FILTER}
            GROUP BY m.booklet_id ORDER BY count(*) DESC, m.booklet_id LIMIT 1""",
        model_params(year, area, booklet, language, shots, models),
    ).fetchall()
    return int(row[0][0]) if row else None


def model_points(
    con: duckdb.DuckDBPyConnection, year: int, area: str | None, booklet: int | None,
    language: str | None, shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """One row per model response pattern (run × prompt variant × shuffle) in the selection.

    Columns: model (the run series), family, instruction_tuned, run_id, area, booklet_id,
    item_language, prompt_language, shots, shuffle, theta, theta_se, lz, lz_star, ctt, n_scored,
    nota.
    """
    return con.execute(
        f"""SELECT {SERIES} AS model, coalesce(mo.family, 'unknown family') AS family,
                   mo.instruction_tuned, m.run_id, m.area, m.booklet_id, m.item_language,
                   m.prompt_language, m.shots, m.shuffle, m.theta, m.theta_se, m.lz,
                   m.lz_star, m.ctt, m.n_scored, m.nota
            FROM model_scores m JOIN model_runs r USING (run_id)
            LEFT JOIN models mo ON mo.model_id = r.model_id
            WHERE {MODEL_FILTER}
            ORDER BY model, m.area, m.run_id, m.prompt_language, m.shots, m.shuffle""",
        model_params(year, area, booklet, language, shots, models, pooled),
    ).df()


def model_item_correct(
    con: duckdb.DuckDBPyConnection, year: int, area: str, language: str | None,
    shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """Per run series (``model``) and item: answers (shuffles × variants × runs) and how many
    were correct."""
    return con.execute(
        f"""SELECT {SERIES} AS model, m.item_id, count(*)::INTEGER AS answers,
                   sum(CASE WHEN m.correct THEN 1 ELSE 0 END)::INTEGER AS correct
            FROM model_responses m JOIN model_runs r USING (run_id)
            WHERE {MODEL_FILTER}
            GROUP BY model, m.item_id""",
        model_params(year, area, None, language, shots, models, pooled),
    ).df()


def model_pattern_matrix(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    language: str | None, shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """Long form of every model response pattern with its θ, for discrimination indices.

    One row per (pattern, item): pattern (a stable text key), model (the run series), theta,
    item_id, correct.
    """
    return con.execute(
        f"""SELECT concat_ws('|', m.run_id, m.prompt_language, m.shots, m.shuffle, m.booklet_id,
                             coalesce(CAST(s.item_language AS VARCHAR), '')) AS pattern,
                   {SERIES} AS model, s.theta, m.item_id,
                   CASE WHEN m.correct THEN 1.0 ELSE 0.0 END AS correct
            FROM model_responses m JOIN model_runs r USING (run_id)
            JOIN model_scores s ON {PATTERN_JOIN}
            WHERE {MODEL_FILTER} AND NOT isnan(s.theta)
            ORDER BY pattern, m.item_id""",
        model_params(year, area, booklet, language, shots, models, pooled),
    ).df()


def model_item_choices(
    con: duckdb.DuckDBPyConnection, year: int, item_id: int, language: str | None,
    shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """Per run series: how often it chose each original letter on one item, and how often
    correctly. Columns: model, choice, n, correct.
    """
    params = model_params(year, None, None, language, shots, models, pooled)
    params["item"] = int(item_id)
    return con.execute(
        f"""SELECT {SERIES} AS model, coalesce(m.choice, '?') AS choice, count(*)::INTEGER AS n,
                   sum(CASE WHEN m.correct THEN 1 ELSE 0 END)::INTEGER AS correct
            FROM model_responses m JOIN model_runs r USING (run_id)
            WHERE {MODEL_FILTER} AND m.item_id = $item
            GROUP BY model, choice ORDER BY model, choice""",
        params,
    ).df()


def model_item_theta(
    con: duckdb.DuckDBPyConnection, year: int, item_id: int, language: str | None,
    shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """Per run series, over the response patterns that contain the item: mean θ, patterns, and
    the fraction of them that answered it correctly. Columns: model, patterns, mean_theta,
    fraction_correct."""
    params = model_params(year, None, None, language, shots, models, pooled)
    params["item"] = int(item_id)
    return con.execute(
        f"""SELECT {SERIES} AS model, count(*)::INTEGER AS patterns, avg(s.theta) AS mean_theta,
                   avg(CASE WHEN m.correct THEN 1.0 ELSE 0.0 END) AS fraction_correct
            FROM model_responses m JOIN model_runs r USING (run_id)
            JOIN model_scores s ON {PATTERN_JOIN}
            WHERE {MODEL_FILTER} AND m.item_id = $item
            GROUP BY model ORDER BY model""",
        params,
    ).df()
