"""SQL of adaptive testing: item banks, candidates to replay, and live CAT paths.

Every value a caller chooses is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.connection import insert_rows

#: Columns of ``cat_paths`` in the order the workflows write them.
CAT_PATH_COLUMNS = (
    "run_id", "model_id", "label", "backend", "year", "area", "booklet_id", "prompt_language",
    "shots", "path", "step", "item_id", "position", "choice", "correct", "theta", "theta_se",
    "settings", "created_at",
)


def area_bank_items(con: duckdb.DuckDBPyConnection, area: str,
                    years: Sequence[int] | None = None) -> pd.DataFrame:
    """An area's distinct items with parameters: item_id, year, a, b, c, skill.

    One row per CO_ITEM (its latest year when several years are pooled; INEP's scale is common
    across years); abandoned items and items without parameters are left out. ``years`` None
    pools every stored year.
    """
    return con.execute(
        """SELECT item_id, year, a, b, c, skill FROM (
               SELECT item_id, year, a, b, c, skill,
                      row_number() OVER (PARTITION BY item_id
                                         ORDER BY year DESC, booklet_id) AS pick
               FROM items
               WHERE area = $area AND ($years IS NULL OR list_contains($years, year))
                 AND item_id IS NOT NULL AND NOT coalesce(abandoned, false)
                 AND a IS NOT NULL AND b IS NOT NULL AND c IS NOT NULL)
           WHERE pick = 1 ORDER BY item_id""",
        {"area": area, "years": None if years is None else [int(y) for y in years]},
    ).df()


def candidate_sample(con: duckdb.DuckDBPyConnection, year: int, area: str, n: int,
                     seed: int) -> pd.DataFrame:
    """Up to ``n`` scored candidates of an area (not blank), a fixed pseudo-random sample for
    a seed: examinee_id, booklet_id, language, responses, theta, theta_se.

    The sample is drawn from ``scores`` alone (every score row comes from a present record with
    its answers) and only then joined to its records: joining first would carry every
    candidate's answer string through the sort.
    """
    return con.execute(
        """WITH picked AS (
               SELECT examinee_id, theta, theta_se, hash(examinee_id, $seed) AS draw
               FROM scores
               WHERE year = $year AND area = $area AND NOT coalesce(blank, false)
                 AND theta IS NOT NULL
               ORDER BY draw, examinee_id
               LIMIT $n)
           SELECT r.examinee_id, r.booklet_id, r.language, r.responses, p.theta, p.theta_se
           FROM picked p
           JOIN area_records r ON r.year = $year AND r.area = $area
                              AND r.examinee_id = p.examinee_id
           WHERE r.presence = 1 AND r.responses IS NOT NULL
           ORDER BY p.draw, p.examinee_id""",
        {"year": int(year), "area": area, "n": int(n), "seed": int(seed)},
    ).df()


def replace_cat_paths(con: duckdb.DuckDBPyConnection, run_id: str, rows: pd.DataFrame) -> None:
    """Replace the stored steps of one live CAT run with ``rows``, in one transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM cat_paths WHERE run_id = ?", [run_id])
        if len(rows):
            insert_rows(con, "cat_paths", rows[list(CAT_PATH_COLUMNS)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def cat_paths(con: duckdb.DuckDBPyConnection, year: int | None = None,
              area: str | None = None) -> pd.DataFrame:
    """Stored live CAT steps (every column of ``cat_paths``), by run, path and step."""
    return con.execute(
        """SELECT * FROM cat_paths
           WHERE ($year IS NULL OR year = $year) AND ($area IS NULL OR area = $area)
           ORDER BY label, area, path, step""",
        {"year": None if year is None else int(year), "area": area},
    ).df()


def full_exam_scores(con: duckdb.DuckDBPyConnection, year: int, areas: Sequence[str],
                     model_ids: Sequence[str]) -> pd.DataFrame:
    """Each model's full-exam θ per area and prompt: model_id, area, prompt_language, shots,
    theta (mean θ over its scored response patterns, every run of the model pooled),
    theta_se (their mean SE), n_patterns and runs (the runs' labels, '; '-joined)."""
    return con.execute(
        """SELECT r.model_id, m.area, m.prompt_language, m.shots, avg(m.theta) AS theta,
                  avg(m.theta_se) AS theta_se, count(*) AS n_patterns,
                  string_agg(DISTINCT coalesce(r.label, r.model_id), '; '
                             ORDER BY coalesce(r.label, r.model_id)) AS runs
           FROM model_scores m JOIN model_runs r ON r.run_id = m.run_id
           WHERE m.year = $year AND list_contains($areas, m.area)
             AND list_contains($models, r.model_id)
             AND m.theta IS NOT NULL AND NOT isnan(m.theta)
           GROUP BY ALL ORDER BY r.model_id, m.area, m.prompt_language, m.shots""",
        {"year": int(year), "areas": [str(a) for a in areas],
         "models": [str(m) for m in model_ids]},
    ).df()


def area_item_icc(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """Humans' answers to each item of an area per θ bin (``item_icc``, both LC languages
    summed): item_id, theta_bin (lower edge), n, n_correct."""
    return con.execute(
        """SELECT item_id, theta_bin, sum(n)::BIGINT AS n, sum(n_correct)::BIGINT AS n_correct
           FROM item_icc WHERE year = $year AND area = $area
           GROUP BY item_id, theta_bin ORDER BY item_id, theta_bin""",
        {"year": int(year), "area": area},
    ).df()
