"""The Years page's queries: per exam year, the humans' aggregates, the items' difficulty with
the humans' share correct, and the selected runs' patterns and answers. Read-only; every choice
is a bound parameter. (Named *trend* queries: ``store.year_tables`` is the SQL of ingesting a
year, another matter.)

Conventions as in ``store.model_sql``: ``runs`` are run labels, ``language`` the prompt
language, ``shots`` a shots setting (:data:`~store.model_sql.UNCOUNTED_SHOTS` for the
runs whose prompt type names no count), ``pooled`` names each series by its model instead of
its run.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.model_sql import RUN_LABEL, SERIES, UNCOUNTED_SHOTS

#: The selected runs' rows (alias m, joined to model_runs r) in the chosen years and areas,
#: under one prompt language and one shots setting.
_RUNS_FILTER = f"""
    list_contains($years, m.year) AND list_contains($areas, m.area)
    AND m.prompt_language = $language AND coalesce(m.shots, {UNCOUNTED_SHOTS}) = $shots
    AND list_contains($runs, {RUN_LABEL})
"""


#: The columns of :func:`band_answers`.
BAND_ANSWER_COLUMNS = ("series", "run_id", "year", "area", "booklet_id", "shuffle", "band",
                       "answered", "correct")


def _run_params(years: Sequence[int], areas: Sequence[str], runs: Sequence[str], language: str,
                shots: int, pooled: bool) -> dict:
    return {"years": [int(y) for y in years], "areas": [str(a) for a in areas],
            "runs": [str(r) for r in runs], "language": str(language), "shots": int(shots),
            "pooled": bool(pooled)}


def year_humans(con: duckdb.DuckDBPyConnection, years: Sequence[int],
                areas: Sequence[str]) -> pd.DataFrame:
    """Every scored candidate of each year and area (``agg_populations``, group 'all', every
    booklet): year, area, n (candidates), theta_mean, theta_sd, theta_se (θ in logits),
    pct_mean, pct_sd, pct_se (percent correct, 0–100). Years stored from their item file alone
    have no row."""
    return con.execute(
        """SELECT year, area, n, theta_mean, theta_sd, theta_se, pct_mean, pct_sd, pct_se
           FROM agg_populations
           WHERE list_contains($years, year) AND list_contains($areas, area)
             AND group_kind = 'all' AND booklets = 'all'
           ORDER BY year, area""",
        {"years": [int(y) for y in years], "areas": [str(a) for a in areas]},
    ).df()


def year_items(con: duckdb.DuckDBPyConnection, years: Sequence[int], areas: Sequence[str],
               runs: Sequence[str], language: str, shots: int) -> pd.DataFrame:
    """The usable items (a difficulty, not abandoned) of each year's and area's reference form,
    one row per distinct item (LC: both foreign-language blocks).

    The reference form is the valid booklet the most candidates took (its items are those of
    every colour of the main application; a year's other applications hold other items); in a
    year without candidates, the booklet the runs labelled ``runs`` answered most often under
    ``language`` and ``shots``; ties and the rest by lowest booklet id. Columns: year, area,
    booklet_id (the reference form), item_id, item_language (NULL common, 0 English, 1
    Spanish), b (IRT difficulty, logits), p_value (share of the candidates who saw the item
    that answered it right, 0–1, pooled over every booklet holding it: ``item_stats``; NaN
    without candidates) and humans (how many candidates that share is over, 0 without)."""
    params = _run_params(years, areas, runs, language, shots, False)
    del params["pooled"]  # no series named here; DuckDB refuses an unused parameter
    return con.execute(
        f"""WITH candidates AS (
               SELECT year, booklet_id, sum(n) AS n FROM agg_theta_ctt
               WHERE list_contains($years, year) AND group_kind = 'all'
               GROUP BY year, booklet_id),
           answered AS (
               SELECT m.year, m.booklet_id, count(*) AS n
               FROM model_scores m JOIN model_runs r USING (run_id)
               WHERE {_RUNS_FILTER}
               GROUP BY m.year, m.booklet_id),
           reference AS (
               SELECT b.year, b.area, b.booklet_id,
                      row_number() OVER (PARTITION BY b.year, b.area
                                         ORDER BY coalesce(c.n, 0) DESC, coalesce(a.n, 0) DESC,
                                                  b.booklet_id) AS place
               FROM booklets b
               LEFT JOIN candidates c USING (year, booklet_id)
               LEFT JOIN answered a USING (year, booklet_id)
               WHERE list_contains($years, b.year) AND list_contains($areas, b.area)
                 AND b.valid),
           form_items AS (
               SELECT i.year, i.area, any_value(i.booklet_id) AS booklet_id, i.item_id,
                      any_value(i.item_language) AS item_language, any_value(i.b) AS b
               FROM items i JOIN reference f
                 ON f.year = i.year AND f.booklet_id = i.booklet_id AND f.place = 1
               WHERE i.position IS NOT NULL
               GROUP BY i.year, i.area, i.item_id
               HAVING NOT bool_or(coalesce(i.abandoned, false)) AND isfinite(any_value(i.b)))
           SELECT d.year, d.area, d.booklet_id, d.item_id, d.item_language, d.b, s.p_value,
                  coalesce(s.n, 0)::BIGINT AS humans
           FROM form_items d
           LEFT JOIN item_stats s
             ON s.year = d.year AND s.area = d.area AND s.item_id = d.item_id
            AND s.item_language IS NOT DISTINCT FROM d.item_language
           ORDER BY d.year, d.area, d.b, d.item_id""",
        params,
    ).df()


def year_patterns(con: duckdb.DuckDBPyConnection, years: Sequence[int], areas: Sequence[str],
                  runs: Sequence[str], language: str, shots: int,
                  pooled: bool = False) -> pd.DataFrame:
    """One row per response pattern (repetition) of the runs labelled ``runs`` in ``years`` and
    ``areas`` under prompt ``language`` and ``shots``: series (run label, or model id when
    ``pooled``), run_id, year, area, booklet_id, shuffle, theta (the stored EAP, logits), ctt
    (items right) and n_scored (items counted)."""
    return con.execute(
        f"""SELECT {SERIES} AS series, m.run_id, m.year, m.area, m.booklet_id, m.shuffle,
                   m.theta, m.ctt, m.n_scored
            FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE {_RUNS_FILTER}
            ORDER BY series, m.year, m.area, m.run_id, m.shuffle""",
        _run_params(years, areas, runs, language, shots, pooled),
    ).df()


def band_answers(con: duckdb.DuckDBPyConnection, years: Sequence[int], areas: Sequence[str],
                 runs: Sequence[str], language: str, shots: int, pooled: bool,
                 item_bands: Sequence[tuple[int, str, int, int]]) -> pd.DataFrame:
    """Per response pattern of the selected runs (filters as :func:`year_patterns`) and
    difficulty band, how many of the band's items it answered and how many right.

    ``item_bands``: (year, area, item_id, band) per banded item (the band rule is the
    dashboard's, ``dashboard.years.data.difficulty_bands``); answers to other items are left
    out. Columns: series, run_id, year, area, booklet_id, shuffle, band, answered, correct."""
    if not item_bands:  # nothing to join (DuckDB cannot type an empty list)
        return pd.DataFrame(columns=list(BAND_ANSWER_COLUMNS))
    params = _run_params(years, areas, runs, language, shots, pooled)
    params.update({"band_years": [int(row[0]) for row in item_bands],
                   "band_areas": [str(row[1]) for row in item_bands],
                   "band_items": [int(row[2]) for row in item_bands],
                   "band_codes": [int(row[3]) for row in item_bands]})
    return con.execute(
        f"""WITH bands AS (
                SELECT unnest($band_years) AS year, unnest($band_areas) AS area,
                       unnest($band_items) AS item_id, unnest($band_codes) AS band)
            SELECT {SERIES} AS series, m.run_id, m.year, m.area, m.booklet_id, m.shuffle,
                   b.band, count(*)::INTEGER AS answered,
                   sum(CASE WHEN m.correct THEN 1 ELSE 0 END)::INTEGER AS correct
            FROM model_responses m JOIN model_runs r USING (run_id)
            JOIN bands b ON b.year = m.year AND b.area = m.area AND b.item_id = m.item_id
            WHERE {_RUNS_FILTER}
            GROUP BY ALL
            ORDER BY series, m.year, m.area, m.run_id, m.booklet_id, m.shuffle, b.band""",
        params,
    ).df()
