"""Every SQL query the dashboard pages run. Read-only; every user choice is a bound parameter.

Each function takes an open connection and plain values and returns a pandas DataFrame (or a
small Python value). Human backgrounds come from the pre-aggregated tables (``agg_theta_ctt``,
``agg_theta_lz``, ``agg_theta_lz_star``, ``item_stats``, ``item_icc``, ``option_counts``), never
from ``scores`` row by row, so a full-size year (about 4M candidates) costs the same as the demo.

Conventions for the filter arguments:

- ``booklet``: a ``CO_PROVA`` or None for every booklet of the area. Humans are those who
  took that booklet; model runs are those that took it *or any booklet of the year holding the
  same items* (booklets of one area differ only in the order of their items, so a model's
  answers and θ carry over through the item ids);
- ``group_kind`` / ``group_value``: ``'all'/'all'``, ``'state'/'SP'`` or ``'school_type'/'2'``,
  the subgroups the histograms were built for;
- ``models``: the selected runs, as a list of run labels (``model_runs.label``, e.g.
  ``llama2-13b · few-shot · 30 seeds``; the model id for runs stored without one). Labels are
  unique per run (``store.model_runs``), so pages compare runs and never pool two silently. An
  empty list selects none;
- ``pooled``: False, each run is its own series (named by its label); True, the selected runs
  of one model form one series named by the model id (only on request: the sidebar's pool
  switch, whose captions say what was pooled);
- ``language``: the prompt language of model runs ('pt' or 'en'), None for both;
- ``shots``: 0, 1 or 4, :data:`UNCOUNTED_SHOTS` for the runs whose prompt type names no count
  (imported as the paper's ``few-shot``, stored with no shots: they match this setting and no
  other), None for every run whatever its shots.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import pandas as pd

from enem.score_batches import REPRODUCED_SHARE_FLOOR
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from store.connection import one_row
from store.histograms import PERSON_FIT_TABLES
from store.queries import table_names
from store.schema import TABLES

#: A run's label (model · prompt type · repetitions), unique per run: what the sidebar selects.
RUN_LABEL = "coalesce(r.label, r.model_id)"

#: The series a row of a selected run belongs to: its run (its label), or its model when the
#: selection pools the runs of each model (``$pooled``, bound by :func:`model_params`).
SERIES = f"CASE WHEN $pooled THEN r.model_id ELSE {RUN_LABEL} END"

#: The prompt variant a run recorded (``inference.prompt_variants``), NULL for runs that
#: recorded none (made before variants existed, or imported): they used the base prompt.
PROMPT_VARIANT = "json_extract_string(r.options, '$.prompt_variant.name')"

#: The shots setting of runs whose prompt type names no count (the paper's ``few-shot``; their
#: rows have shots NULL): a filter value of its own, so they are never shown as 0-shot.
UNCOUNTED_SHOTS = -1
#: How a dashboard address (``shots=``) names :data:`UNCOUNTED_SHOTS`.
UNCOUNTED_SHOTS_URL = "published"


def shots_to_url(shots: int) -> str:
    """The ``shots=`` value of a shots setting in a dashboard address."""
    return UNCOUNTED_SHOTS_URL if int(shots) == UNCOUNTED_SHOTS else str(int(shots))


def shots_from_url(value: str) -> int:
    """The shots setting a dashboard address's ``shots=`` value names (ValueError when it is
    neither a whole number nor ``published``)."""
    value = value.strip()
    return UNCOUNTED_SHOTS if value == UNCOUNTED_SHOTS_URL else int(value)

#: The booklets of year ``$year`` holding the same items as booklet ``$booklet`` (its colour
#: variants: other orders of one item set), itself included.
SAME_ITEMS_BOOKLETS = """
        SELECT booklet_id FROM items WHERE year = $year AND position IS NOT NULL
        GROUP BY booklet_id
        HAVING list_sort(list(DISTINCT item_id)) = (
            SELECT list_sort(list(DISTINCT item_id)) FROM items
            WHERE year = $year AND booklet_id = $booklet AND position IS NOT NULL)"""

#: Model-run filter shared by every query on ``model_scores`` / ``model_responses`` (alias m).
MODEL_FILTER = """
    m.year = $year
    AND ($area IS NULL OR m.area = $area)
    AND ($booklet IS NULL OR m.booklet_id IN (""" + SAME_ITEMS_BOOKLETS + """))
    AND ($language IS NULL OR m.prompt_language = $language)
    AND ($shots IS NULL OR coalesce(m.shots, """ + str(UNCOUNTED_SHOTS) + """) = $shots)
    AND list_contains($models, """ + RUN_LABEL + ")\n"


#: Joins a response row (m) to the scored pattern (s) it belongs to. An LC pattern's language
#: is the pattern's; a response row may carry it or leave it empty on the common items.
_PATTERN_JOIN = """
    s.run_id = m.run_id AND s.year = m.year AND s.area = m.area AND s.booklet_id = m.booklet_id
    AND s.prompt_language = m.prompt_language AND s.shots IS NOT DISTINCT FROM m.shots
    AND s.shuffle = m.shuffle
    AND (m.item_language IS NULL OR s.item_language IS NULL
         OR m.item_language = s.item_language)
"""


def model_params(
    year: int, area: str | None, booklet: int | None, language: str | None, shots: int | None,
    models: Sequence[str], pooled: bool | None = None,
) -> dict:
    """The bound parameters of :data:`MODEL_FILTER` (None: no restriction), and of
    :data:`SERIES` when ``pooled`` is given (queries that do not name the series leave it out:
    DuckDB refuses a parameter the query does not use)."""
    params = {"year": int(year), "area": area,
              "booklet": None if booklet is None else int(booklet), "language": language,
              "shots": None if shots is None else int(shots), "models": [str(m) for m in models]}
    if pooled is not None:
        params["pooled"] = bool(pooled)
    return params


# ---------------------------------------------------------------------------------------------
# What is loaded


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
    """Every run (by its label, see the module notes): model (the run label), model_id, family,
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


#: The flagged-booklet rule (``enem.score_batches.booklet_flagged``) over the columns of
#: ``booklet_audit``, for every query that needs it: at least one official nota checked and
#: fewer than ``$share`` (bound to ``enem.score_batches.REPRODUCED_SHARE_FLOOR``) of them
#: matched. False, never NULL, where the counts are missing.
FLAGGED_BOOKLET = "coalesce(nota_checked > 0 AND nota_matched < $share * nota_checked, false)"


def flagged_booklets(con: duckdb.DuckDBPyConnection, year: int) -> list[int]:
    """The booklet ids of ``year`` that :data:`FLAGGED_BOOKLET` flags, ascending (the stored
    counts only: unlike :func:`booklet_audit`, whatever recipe the audit used)."""
    return [int(r[0]) for r in con.execute(
        f"""SELECT booklet_id FROM booklet_audit WHERE year = $year AND {FLAGGED_BOOKLET}
            ORDER BY booklet_id""",
        {"year": int(year), "share": REPRODUCED_SHARE_FLOOR}).fetchall()]


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


def booklet_audit(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """Per booklet of a year: booklet_id, area, colour, note, present, scored, nota_checked,
    nota_matched, reproduced (share of checked notas matched to the decimal, NaN when none were
    checked), inep_recipe and flagged (:data:`FLAGGED_BOOKLET`: reproduced below
    ``enem.score_batches.REPRODUCED_SHARE_FLOOR``).

    The audit compares INEP's official recipe with ``NU_NOTA`` whatever settings the year
    displays. Files ingested before it did compared the display settings' nota: where those
    were not INEP's recipe the counts say nothing about the parameters, so ``inep_recipe`` is
    False and no booklet is flagged (re-ingesting the year audits it again)."""
    frame = con.execute(
        f"""SELECT a.booklet_id, a.area, b.colour, b.note, a.present, a.scored, a.nota_checked,
                  a.nota_matched,
                  CASE WHEN a.nota_checked > 0 THEN a.nota_matched / a.nota_checked END
                      AS reproduced,
                  {FLAGGED_BOOKLET} AS flagged
           FROM booklet_audit a
           LEFT JOIN booklets b ON b.year = a.year AND b.booklet_id = a.booklet_id
           WHERE a.year = $year ORDER BY a.area, a.present DESC, a.booklet_id""",
        {"year": int(year), "share": REPRODUCED_SHARE_FLOOR},
    ).df()
    row = con.execute(
        """SELECT coalesce(audit_scoring, scoring) FROM ingests WHERE year = ?
           ORDER BY ingest_id DESC LIMIT 1""", [int(year)]).fetchone()
    recipe = row[0] if row else None
    inep = ScoringOptions.from_stored(recipe) == DEFAULT_OPTIONS
    frame.insert(len(frame.columns) - 1, "inep_recipe", inep)
    frame["flagged"] = frame["flagged"].astype(bool) & inep
    return frame


def table_counts(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> pd.DataFrame:
    """Row counts of the named tables (names come from the schema, never from users)."""
    rows = []
    for table in tables:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        count = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
        rows.append({"table": table, "rows": int(count)})
    return pd.DataFrame(rows)


def ingest_history(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every ingest, newest first, with its files, timings, counts and whether it is live."""
    return con.execute(
        """SELECT ingest_id, year, source, is_synthetic, layout, microdata_file, items_file,
                  encoding, started_at, finished_at, round(seconds, 1) AS seconds, rows_read,
                  records_present, patterns_scored, rows_rejected, nota_checked, nota_matched,
                  coalesce(items_only, false) AS items_only, scoring,
                  ingest_id = max(ingest_id) OVER (PARTITION BY year) AS live
           FROM ingests ORDER BY ingest_id DESC"""
    ).df()


def reject_summary(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Rejected rows grouped by year, kind, area and reason, most frequent first."""
    return con.execute(
        """SELECT year, kind, coalesce(area, '') AS area, reason, count(*)::BIGINT AS rows
           FROM rejects GROUP BY ALL ORDER BY year, rows DESC"""
    ).df()


def reject_sample(
    con: duckdb.DuckDBPyConnection, year: int, reason: str | None, limit: int = 200
) -> pd.DataFrame:
    """Up to ``limit`` rejected rows of a year, optionally of one reason."""
    return con.execute(
        """SELECT ingest_id, kind, line, examinee_id, area, reason, detail FROM rejects
           WHERE year = $year AND ($reason IS NULL OR reason = $reason)
           ORDER BY kind, line, examinee_id LIMIT $limit""",
        {"year": int(year), "reason": reason, "limit": int(limit)},
    ).df()


def model_run_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Model runs with their series label, model family, settings (prompt type, temperature,
    repetition kind and count, scoring settings as JSON, source file) and how many response
    patterns each has so far."""
    return con.execute(
        """WITH patterns AS (SELECT run_id, count(*) AS patterns FROM model_scores GROUP BY run_id)
           SELECT r.run_id, coalesce(r.label, r.model_id) AS series, r.model_id, mo.family,
                  mo.instruction_tuned, r.backend, r.origin,
                  coalesce(r.years, CAST(r.year AS VARCHAR)) AS years, r.areas, r.languages,
                  r.shots, r.prompt_type, r.temperature,
                  coalesce(r.repetition, 'shuffle') AS repetition, r.n_shuffles AS repetitions,
                  r.status, r.created_at, r.finished_at,
                  coalesce(p.patterns, 0)::BIGINT AS patterns, r.scoring, r.source, r.error
           FROM model_runs r LEFT JOIN models mo USING (model_id)
           LEFT JOIN patterns p USING (run_id)
           ORDER BY r.created_at DESC NULLS LAST, r.run_id"""
    ).df()


# ---------------------------------------------------------------------------------------------
# Humans (pre-aggregated)


def _human_histogram(con: duckdb.DuckDBPyConnection, table: str, bins: str, year: int,
                     area: str, booklet: int | None, group_kind: str, group_value: str,
                     exclude: Sequence[int] = (), include_blank: bool = True,
                     measures: str = "sum(n)::BIGINT AS n") -> pd.DataFrame:
    """Counts (or other ``measures``) of a pre-aggregated table summed over booklets, by the
    ``bins`` columns.

    ``exclude`` lists booklets left out of the sum (those whose notas are not reproduced);
    ``include_blank`` False leaves out all-blank tests (files built before the ``blank``
    column have none marked). ``table``, ``bins`` and ``measures`` are constants of this
    module, never user input.
    """
    return con.execute(
        f"""SELECT {bins}, {measures} FROM {table}
            WHERE year = $year AND area = $area AND ($booklet IS NULL OR booklet_id = $booklet)
              AND NOT list_contains($exclude, booklet_id)
              AND group_kind = $kind AND group_value = $value
              AND ($include_blank OR NOT coalesce(blank, false))
            GROUP BY {bins} ORDER BY {bins}""",
        {"year": int(year), "area": area, "booklet": booklet, "kind": group_kind,
         "value": group_value, "exclude": [int(b) for b in exclude],
         "include_blank": bool(include_blank)},
    ).df()


def human_theta_ctt(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> pd.DataFrame:
    """2-D histogram of (θ bin, CTT): theta_bin (lower edge), ctt, n; booklets summed."""
    return _human_histogram(con, "agg_theta_ctt", "theta_bin, ctt", year, area, booklet,
                            group_kind, group_value, exclude, include_blank)


def human_theta_lz(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
    statistic: str = "lz",
) -> pd.DataFrame:
    """2-D histogram of (θ bin, person-fit bin): theta_bin, lz_bin (lower edges), n; booklets
    summed. ``statistic``: 'lz' (l_z, ``agg_theta_lz``) or 'lz_star' (Snijders' l_z*,
    ``agg_theta_lz_star``; ``lz_bin`` then holds the l_z* bin). Empty, with these columns, when
    the store has no table for the statistic (made before ``agg_theta_lz_star`` existed).

    Raises
    ------
    ValueError
        If ``statistic`` is neither 'lz' nor 'lz_star'.
    """
    table = _person_fit_table(statistic)
    if table not in table_names(con):
        return pd.DataFrame({"theta_bin": pd.Series(dtype="float64"),
                             "lz_bin": pd.Series(dtype="float64"),
                             "n": pd.Series(dtype="int64")})
    return _human_histogram(con, table, "theta_bin, lz_bin", year, area, booklet,
                            group_kind, group_value, exclude, include_blank)


def lz_star_missing(con: duckdb.DuckDBPyConnection, year: int) -> bool:
    """True when ``year`` has the humans' l_z histogram but no l_z* one: the year was ingested
    before ``agg_theta_lz_star`` existed (ingesting it again fills it). False when both are
    there, and for a year with no human histogram at all (nothing to miss)."""
    has_lz = one_row(con.execute("SELECT count(*) > 0 FROM agg_theta_lz WHERE year = ?",
                                 [int(year)]))[0]
    if not has_lz:
        return False
    if PERSON_FIT_TABLES["lz_star"] not in table_names(con):
        return True
    return not one_row(con.execute(
        "SELECT count(*) > 0 FROM agg_theta_lz_star WHERE year = ?", [int(year)]))[0]


def _person_fit_table(statistic: str) -> str:
    """The histogram table of a person-fit statistic, from a fixed mapping (never formatted
    from the caller's text)."""
    try:
        return PERSON_FIT_TABLES[statistic]
    except KeyError:
        raise ValueError(f"unknown person-fit statistic {statistic!r}: "
                         f"use one of {', '.join(PERSON_FIT_TABLES)}") from None


def human_theta_histogram(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> pd.DataFrame:
    """Marginal θ histogram: theta_bin (lower edge), n."""
    return _human_histogram(con, "agg_theta_ctt", "theta_bin", year, area, booklet,
                            group_kind, group_value, exclude, include_blank)


def human_theta_se(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> pd.DataFrame:
    """The humans' mean SE(θ) per θ bin: theta_bin (lower edge), n, mean_se (NaN in files
    built before the SE sums were kept)."""
    return _human_histogram(con, "agg_theta_ctt", "theta_bin", year, area, booklet, group_kind,
                            group_value, exclude, include_blank,
                            measures="sum(n)::BIGINT AS n, sum(se_sum) / sum(n) AS mean_se")


def human_count(
    con: duckdb.DuckDBPyConnection, year: int, area: str, booklet: int | None,
    group_kind: str, group_value: str, exclude: Sequence[int] = (), include_blank: bool = True,
) -> int:
    """How many candidates the human histograms of these filters hold (0: the filters leave
    no human to draw)."""
    counts = _human_histogram(con, "agg_theta_ctt", "area", year, area, booklet, group_kind,
                              group_value, exclude, include_blank)
    return int(counts["n"].sum()) if len(counts) else 0


def blank_tests(con: duckdb.DuckDBPyConnection, year: int) -> pd.DataFrame:
    """All-blank tests per area of a year: area, blank, candidates (every scored one)."""
    return con.execute(
        """SELECT area, sum(CASE WHEN coalesce(blank, false) THEN n ELSE 0 END)::BIGINT AS blank,
                  sum(n)::BIGINT AS candidates
           FROM agg_theta_ctt WHERE year = $year AND group_kind = 'all'
           GROUP BY area ORDER BY area""",
        {"year": int(year)},
    ).df()


def main_booklet(con: duckdb.DuckDBPyConnection, year: int, area: str) -> int | None:
    """The valid booklet of an area taken by the most candidates (ties: lowest id)."""
    row = con.execute(
        """SELECT b.booklet_id FROM booklets b
           LEFT JOIN (SELECT booklet_id, sum(n) AS n FROM agg_theta_ctt
                      WHERE year = $year AND area = $area AND group_kind = 'all'
                      GROUP BY booklet_id) c USING (booklet_id)
           WHERE b.year = $year AND b.area = $area AND b.valid
           ORDER BY coalesce(c.n, 0) DESC, b.booklet_id LIMIT 1""",
        {"year": int(year), "area": area},
    ).fetchall()
    return int(row[0][0]) if row else None


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


def form_items(
    con: duckdb.DuckDBPyConnection, year: int, booklet: int, item_language: int | None
) -> pd.DataFrame:
    """The items of one booklet form in string order (LC: common items plus one language; a
    2020 digital LC booklet: the version of that language; unscored second listings left out).

    Columns: position, co_posicao, item_id, item_language, key, skill, a, b, c, abandoned.
    """
    return con.execute(
        """SELECT row_number() OVER (ORDER BY co_posicao)::INTEGER AS position, co_posicao,
                  item_id, item_language, key, skill, a, b, c, abandoned
           FROM items
           WHERE year = $year AND booklet_id = $booklet AND position IS NOT NULL
             AND (item_language IS NULL OR item_language = $language)
             AND (version IS NULL OR version = $language)
           ORDER BY co_posicao""",
        {"year": int(year), "booklet": int(booklet), "language": item_language},
    ).df()


def area_items(con: duckdb.DuckDBPyConnection, year: int, area: str) -> pd.DataFrame:
    """Every distinct item of an area with parameters and human statistics.

    Columns: item_id, item_language, key, skill, a, b, c, abandoned, adapted, first_position
    (its lowest position in any booklet), p_value, point_biserial, di, n (humans who saw it).
    """
    return con.execute(
        """WITH distinct_items AS (
               SELECT item_id, any_value(item_language) AS item_language, any_value(key) AS key,
                      any_value(skill) AS skill, any_value(a) AS a, any_value(b) AS b,
                      any_value(c) AS c, bool_or(abandoned) AS abandoned,
                      bool_or(adapted) AS adapted, min(co_posicao) AS first_position
               FROM items WHERE year = $year AND area = $area GROUP BY item_id)
           SELECT d.*, s.p_value, s.point_biserial, s.di, s.n
           FROM distinct_items d
           LEFT JOIN item_stats s ON s.year = $year AND s.area = $area AND s.item_id = d.item_id
           ORDER BY d.first_position, d.item_id""",
        {"year": int(year), "area": area},
    ).df()


def item_record(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """The rows of ``items`` for one item (one per booklet): booklet, position, parameters."""
    return con.execute(
        """SELECT booklet_id, area, item_language, co_posicao, colour, key, skill, a, b, c,
                  abandoned, abandon_reason, adapted
           FROM items WHERE year = $year AND item_id = $item ORDER BY booklet_id""",
        {"year": int(year), "item": int(item_id)},
    ).df()


def item_texts(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """Stored question texts of one item, one row per language."""
    return con.execute(
        """SELECT language, stem, option_a, option_b, option_c, option_d, option_e, key,
                  annulled, source
           FROM question_texts WHERE year = $year AND item_id = $item ORDER BY language""",
        {"year": int(year), "item": int(item_id)},
    ).df()


def item_icc(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """Human empirical proportion correct per θ bin: theta_bin (lower edge), n, n_correct."""
    return con.execute(
        """SELECT theta_bin, sum(n)::BIGINT AS n, sum(n_correct)::BIGINT AS n_correct
           FROM item_icc WHERE year = $year AND item_id = $item
           GROUP BY theta_bin ORDER BY theta_bin""",
        {"year": int(year), "item": int(item_id)},
    ).df()


def item_option_counts(con: duckdb.DuckDBPyConnection, year: int, item_id: int) -> pd.DataFrame:
    """How many humans marked each option (A–E, '.' blank, '*' multiple): option, n."""
    return con.execute(
        """SELECT option, sum(n)::BIGINT AS n FROM option_counts
           WHERE year = $year AND item_id = $item GROUP BY option ORDER BY option""",
        {"year": int(year), "item": int(item_id)},
    ).df()


# ---------------------------------------------------------------------------------------------
# Models


def model_points(
    con: duckdb.DuckDBPyConnection, year: int, area: str | None, booklet: int | None,
    language: str | None, shots: int | None, models: Sequence[str], pooled: bool = False,
) -> pd.DataFrame:
    """One row per model response pattern (run × prompt variant × shuffle) in the selection.

    Columns: model (the run series), family, instruction_tuned, run_id, area, booklet_id, item_language,
    prompt_language, shots, shuffle, theta, theta_se, lz, lz_star, ctt, n_scored, nota.
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
    """Per run series (``model``) and item: answers (shuffles × variants × runs) and how many were correct."""
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
            JOIN model_scores s ON {_PATTERN_JOIN}
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
            JOIN model_scores s ON {_PATTERN_JOIN}
            WHERE {MODEL_FILTER} AND m.item_id = $item
            GROUP BY model ORDER BY model""",
        params,
    ).df()
