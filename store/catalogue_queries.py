"""What the store holds, as the sidebar offers it: the loaded years, a year's booklets, human
subgroups, shots settings and live ingest, and every run by its label. Read-only; every value
is a bound parameter."""

from __future__ import annotations

import duckdb
import pandas as pd

from store.model_sql import RUN_LABEL, UNCOUNTED_SHOTS


def loaded_years(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Years with an ingest, oldest first."""
    return [int(r[0]) for r in con.execute("SELECT DISTINCT year FROM ingests ORDER BY year")
            .fetchall()]


def booklet_catalogue(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """Scorable booklets of a year: booklet_id, area, colour, n_items, candidates (scored)."""
    return con.execute(
        """WITH counted AS (
               SELECT booklet_id, sum(n) AS candidates FROM agg_theta_ctt
               WHERE year = $year AND group_kind = 'all' GROUP BY booklet_id)
           SELECT b.booklet_id, b.area, b.colour, b.n_items,
                  coalesce(c.candidates, 0)::BIGINT AS candidates
           FROM booklets b LEFT JOIN counted c USING (booklet_id)
           WHERE b.year = $year AND b.valid
           ORDER BY b.area, candidates DESC, b.booklet_id""",
        {"year": int(year)},
    ).df()


def human_groups(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """Subgroups with a histogram in that year: group_kind, group_value, candidates."""
    return con.execute(
        """SELECT group_kind, group_value, sum(n)::BIGINT AS candidates FROM agg_theta_ctt
           WHERE year = $year AND group_kind <> 'all'
           GROUP BY group_kind, group_value ORDER BY group_kind, group_value""",
        {"year": int(year)},
    ).df()


def model_catalogue(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run (by its label, ``store.model_sql``): model (the run label), model_id, family,
    size, instruction_tuned, repetition, runs (1 unless an older file gave two runs one label),
    run_ids (list), years (comma-separated), scorings (the distinct stored scoring settings of
    its runs, JSON), patterns, and the settings that tell runs of one model apart: backend,
    prompt_type, n_shuffles, seed, temperature, source, created_at."""
    return con.execute(
        f"""WITH patterns AS (SELECT run_id, count(*) AS n FROM model_scores GROUP BY run_id),
                runs AS (SELECT r.*, {RUN_LABEL} AS model FROM model_runs r),
                series_years AS (
                    SELECT model, string_agg(DISTINCT year, ', ' ORDER BY year) AS years
                    FROM (SELECT model, unnest(string_split(
                              coalesce(years, CAST(year AS VARCHAR)), ',')) AS year FROM runs)
                    GROUP BY model)
           SELECT r.model, any_value(r.model_id) AS model_id,
                  coalesce(any_value(mo.family), 'unknown family') AS family,
                  any_value(mo.size) AS size,
                  any_value(mo.instruction_tuned) AS instruction_tuned,
                  coalesce(any_value(r.repetition), 'shuffle') AS repetition,
                  count(DISTINCT r.run_id)::INTEGER AS runs,
                  list(DISTINCT r.run_id ORDER BY r.run_id) AS run_ids,
                  any_value(sy.years) AS years,
                  list(DISTINCT r.scoring) FILTER (WHERE r.scoring IS NOT NULL) AS scorings,
                  coalesce(sum(p.n), 0)::BIGINT AS patterns,
                  any_value(r.backend) AS backend, any_value(r.prompt_type) AS prompt_type,
                  any_value(r.n_shuffles) AS n_shuffles, any_value(r.seed) AS seed,
                  any_value(r.temperature) AS temperature, any_value(r.source) AS source,
                  min(r.created_at) AS created_at
           FROM runs r
           LEFT JOIN models mo USING (model_id)
           LEFT JOIN patterns p USING (run_id)
           LEFT JOIN series_years sy USING (model)
           GROUP BY r.model ORDER BY family, r.model"""
    ).df()


def shot_settings(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """The shots settings the year's runs were answered under: shots (:data:`UNCOUNTED_SHOTS`
    for rows stored without a count), prompt_types (the distinct prompt types of their runs,
    '/'-joined), patterns."""
    return con.execute(
        f"""SELECT coalesce(m.shots, {UNCOUNTED_SHOTS})::INTEGER AS shots,
                   string_agg(DISTINCT r.prompt_type, '/' ORDER BY r.prompt_type)
                       AS prompt_types,
                   count(*)::BIGINT AS patterns
            FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE m.year = $year GROUP BY 1 ORDER BY 1""",
        {"year": int(year)},
    ).df()


def year_profile(con: duckdb.DuckDBPyConnection, year: int) -> dict:
    """The live ingest of a year: items_only, is_synthetic, candidates, scoring (JSON or None),
    source. Empty dict when the year was never ingested."""
    row = con.execute(
        """SELECT coalesce(items_only, false), is_synthetic, records_present, scoring, source
           FROM ingests WHERE year = ? ORDER BY ingest_id DESC LIMIT 1""",
        [int(year)],
    ).fetchone()
    if row is None:
        return {}
    return {"items_only": bool(row[0]), "is_synthetic": bool(row[1]), "candidates": int(row[2]),
            "scoring": row[3], "source": row[4]}
