"""The overlay's query (Accuracy vs ability, Person fit): which prompt conditions the chosen runs
were answered under, so the page offers only levels that have response patterns. Read-only;
every choice is a bound parameter."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.model_sql import RUN_LABEL, UNCOUNTED_SHOTS


def overlay_levels(con: duckdb.DuckDBPyConnection, year: int, areas: Sequence[str],
                   runs: Sequence[str]) -> pd.DataFrame:
    """One row per (prompt_language, shots) pair the runs labelled ``runs`` answered in ``year``
    and ``areas``: prompt_language ('pt', 'en'), shots (INTEGER; :data:`UNCOUNTED_SHOTS` for
    rows stored without a count, as the sidebar names them), patterns (scored response
    patterns, BIGINT) and runs (how many of the runs have any, BIGINT). Sorted by language,
    then shots; empty when none of the runs answered there."""
    return con.execute(
        f"""SELECT m.prompt_language,
                   coalesce(m.shots, {UNCOUNTED_SHOTS})::INTEGER AS shots,
                   count(*)::BIGINT AS patterns,
                   count(DISTINCT m.run_id)::BIGINT AS runs
            FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE m.year = $year AND list_contains($areas, m.area)
              AND list_contains($runs, {RUN_LABEL})
            GROUP BY 1, 2 ORDER BY 1, 2""",
        {"year": int(year), "areas": [str(a) for a in areas], "runs": [str(r) for r in runs]},
    ).df()
