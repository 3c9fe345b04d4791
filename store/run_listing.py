"""The store's side of listing and removing model runs (``enem-llm runs``, ``remove-run`` and
the Runs page, through ``workflows.runs.service``).

A run is *published* when ``model_runs`` holds it with status 'finished' (a local run's last
step, or an import). Rows of a run that is not published (left by an interrupted write of an
older version, or by hand) are *unpublished* and may be removed with the run.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from store.connection import one_row

#: Tables that hold rows per run_id; removing a run's rows touches these only.
RUN_TABLES: tuple[str, ...] = ("model_responses", "model_scores", "model_runs")
PUBLISHED_STATUS = "finished"


def stored_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run in ``model_runs``, newest first, with its model and settings.

    Columns: run_id, series (the label pages show), model_id, family, backend, origin, years,
    areas, languages, shots, prompt_type, repetition, repetitions, temperature, status,
    finished_at, patterns (scored response patterns), source, unparsed (generated answers whose
    letter could not be read, ``options.unparsed_answers``; NULL for a run that does not say).
    """
    return con.execute(
        """WITH patterns AS (SELECT run_id, count(*) AS patterns FROM model_scores
                             GROUP BY run_id)
           SELECT r.run_id, coalesce(r.label, r.model_id) AS series, r.model_id, mo.family,
                  r.backend, r.origin, coalesce(r.years, CAST(r.year AS VARCHAR)) AS years,
                  r.areas, r.languages, r.shots, r.prompt_type,
                  coalesce(r.repetition, 'shuffle') AS repetition, r.n_shuffles AS repetitions,
                  r.temperature, r.status, r.finished_at,
                  coalesce(p.patterns, 0)::BIGINT AS patterns, r.source,
                  TRY_CAST(json_extract_string(r.options, '$.unparsed_answers') AS BIGINT)
                      AS unparsed
           FROM model_runs r LEFT JOIN models mo USING (model_id)
           LEFT JOIN patterns p USING (run_id)
           ORDER BY r.finished_at DESC NULLS LAST, r.run_id"""
    ).df()


def run_presence(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, object]:
    """What the store holds of one run: ``status`` (its model_runs status, None when it has
    no row there), ``published`` and ``rows`` (its rows in every table of ``RUN_TABLES``)."""
    status = con.execute("SELECT status FROM model_runs WHERE run_id = $run",
                         {"run": run_id}).fetchone()
    rows = one_row(con.execute(
        """SELECT (SELECT count(*) FROM model_responses WHERE run_id = $run)
                + (SELECT count(*) FROM model_scores WHERE run_id = $run)
                + (SELECT count(*) FROM model_runs WHERE run_id = $run)""",
        {"run": run_id}))[0]
    stored = status[0] if status else None
    return {"status": stored, "published": stored == PUBLISHED_STATUS, "rows": int(rows)}


def delete_unpublished_rows(con: duckdb.DuckDBPyConnection, run_id: str) -> int:
    """Delete every row of ``run_id`` unless it is published (ValueError then); returns how
    many rows went. One transaction: all of them or none."""
    con.execute("BEGIN TRANSACTION")
    try:
        if run_presence(con, run_id)["published"]:
            raise ValueError(f"run {run_id} is published in the database; it is not removed")
        removed = 0
        for table in RUN_TABLES:  # constants of this module, never user input
            removed += one_row(con.execute(f"DELETE FROM {table} WHERE run_id = $run",
                                           {"run": run_id}))[0]
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return int(removed)
