"""The Populations page's queries: pre-aggregated human populations and the selected model
runs' response patterns. Read-only; every choice is a bound parameter."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.model_sql import MODEL_FILTER, PROMPT_VARIANT, SERIES, model_params


def population_kinds(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """The groupings stored for a year and area: group_kind, groups (how many populations,
    the empty value '?' included), known (candidates whose value is given)."""
    return con.execute(
        """SELECT group_kind, count(*)::INTEGER AS groups,
                  sum(CASE WHEN group_value NOT LIKE '%?%' THEN n ELSE 0 END)::BIGINT AS known
           FROM agg_populations
           WHERE year = $year AND area = $area AND booklets = 'all'
           GROUP BY group_kind ORDER BY group_kind""",
        {"year": int(year), "area": area},
    ).df()


def population_rows(con: duckdb.DuckDBPyConnection, year: int, area: str, kind: str,
                    booklets: str = "all") -> pd.DataFrame:
    """The populations of one grouping (``kind``) and everyone ('all') in a year and area,
    every column of ``agg_populations``; ``booklets`` 'all' or 'reproduced' (flagged booklets
    left out; 'all' in a year where no booklet is flagged; no rows for an area whose every
    booklet is flagged)."""
    return con.execute(
        """WITH chosen AS (
               SELECT CASE WHEN $booklets = 'reproduced' AND EXISTS (
                          SELECT 1 FROM agg_populations WHERE year = $year
                            AND booklets = 'reproduced') THEN 'reproduced' ELSE 'all' END AS b)
           SELECT p.* FROM agg_populations p, chosen
           WHERE p.year = $year AND p.area = $area AND p.booklets = chosen.b
             AND (p.group_kind = $kind OR p.group_kind = 'all')
           ORDER BY p.group_kind = 'all' DESC, p.group_value""",
        {"year": int(year), "area": area, "kind": kind, "booklets": booklets},
    ).df()


def model_patterns(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    language: str | None, shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """Every response pattern of the selected runs in one area (filters as in
    ``store.model_sql``; ``pooled``: one series per model instead of per run): model
    (the series), run_id, booklet_id, item_language, prompt_language,
    shots, shuffle, response_pattern ('0'/'1'/'.' per item of the form), theta, theta_se (the
    stored EAP), ctt, n_scored, scoring (the run's scoring settings, JSON), prompt_variant (the
    run's, NULL where it recorded none)."""
    return con.execute(
        f"""SELECT {SERIES} AS model, m.run_id, m.booklet_id, m.item_language,
                   m.prompt_language, m.shots, m.shuffle, m.response_pattern, m.theta,
                   m.theta_se, m.ctt, m.n_scored, r.scoring,
                   {PROMPT_VARIANT} AS prompt_variant
            FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE {MODEL_FILTER}
            ORDER BY model, m.run_id, m.prompt_language, m.shots, m.shuffle""",
        model_params(year, area, booklet, language, shots, models, pooled),
    ).df()
