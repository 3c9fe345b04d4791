"""The Conditions page's query: every response pattern of the chosen runs, with each condition
a pattern was answered under. Read-only; every choice is a bound parameter."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from store.model_sql import PROMPT_VARIANT, RUN_LABEL, SAME_ITEMS_BOOKLETS, UNCOUNTED_SHOTS


def condition_patterns(con: duckdb.DuckDBPyConnection, years: Sequence[int],
                       areas: Sequence[str], runs: Sequence[str],
                       booklet: tuple[int, str, int] | None = None) -> pd.DataFrame:
    """One row per response pattern of the runs labelled ``runs`` in ``years`` and ``areas``
    (with ``booklet`` = (year, area, CO_PROVA): in that year and area, only the booklets
    holding that booklet's items, :data:`~store.model_sql.SAME_ITEMS_BOOKLETS`):
    run (its label), model_id, year, area, booklet_id, the pattern's conditions
    (prompt_language, shots, with :data:`~store.model_sql.UNCOUNTED_SHOTS` for a prompt
    type that names no count), the run's (repetition: 'seed' or 'shuffle'; temperature;
    prompt_type; answer_method and prompt_variant, NULL where the run did not record one),
    shuffle (the repetition's number), theta and theta_se (the stored EAP), published_theta (the
    results file's θ; NULL for runs made here), ctt (items right) and n_scored (items counted)."""
    return con.execute(
        f"""SELECT {RUN_LABEL} AS run, r.model_id, m.year, m.area, m.booklet_id,
                   m.prompt_language, coalesce(m.shots, {UNCOUNTED_SHOTS}) AS shots,
                   r.repetition, r.temperature, r.prompt_type,
                   json_extract_string(r.options, '$.answer_method') AS answer_method,
                   {PROMPT_VARIANT} AS prompt_variant,
                   m.shuffle, m.theta, m.theta_se, m.published_theta, m.ctt, m.n_scored
            FROM model_scores m JOIN model_runs r USING (run_id)
            WHERE list_contains($years, m.year) AND list_contains($areas, m.area)
              AND list_contains($runs, {RUN_LABEL})
              AND ($booklet IS NULL OR m.year <> $year OR m.area <> $booklet_area
                   OR m.booklet_id IN ({SAME_ITEMS_BOOKLETS}))
            ORDER BY run, m.year, m.area, m.prompt_language, shots, m.shuffle""",
        {"years": [int(y) for y in years], "areas": [str(a) for a in areas],
         "runs": [str(r) for r in runs],
         "year": None if booklet is None else int(booklet[0]),
         "booklet_area": None if booklet is None else str(booklet[1]),
         "booklet": None if booklet is None else int(booklet[2])},
    ).df()


def condition_choices(con: duckdb.DuckDBPyConnection, year: int, areas: Sequence[str],
                      runs: Sequence[str], language: str, shots: int) -> pd.DataFrame:
    """The option each repetition of the runs labelled ``runs`` chose on each item, in one
    ``year``, ``areas``, prompt ``language`` and ``shots`` setting: run, area, item_id,
    position, shuffle (the repetition) and choice (the original letter; '' for no choice)."""
    return con.execute(
        f"""SELECT {RUN_LABEL} AS run, m.area, m.item_id, m.position, m.shuffle,
                   coalesce(m.choice, '') AS choice
            FROM model_responses m JOIN model_runs r USING (run_id)
            WHERE m.year = $year AND list_contains($areas, m.area)
              AND list_contains($runs, {RUN_LABEL}) AND m.prompt_language = $language
              AND coalesce(m.shots, {UNCOUNTED_SHOTS}) = $shots
            ORDER BY run, m.area, m.position, m.shuffle""",
        {"year": int(year), "areas": [str(a) for a in areas], "runs": [str(r) for r in runs],
         "language": language, "shots": int(shots)},
    ).df()
