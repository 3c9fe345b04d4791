"""Model runs in the store: what a run reads (exam forms, question texts) and how it lands.

A run reads its inputs once, read-only, then works from its own run folder; only publishing
opens the database for writing, in one short transaction, so the dashboard and other runs are
never blocked for long.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa

from enem.items import BookletForm, build_form
from enem.scoring import ScoringOptions
from store.connection import insert_rows, one_row

RESPONSE_COLUMNS = (
    "run_id", "year", "area", "booklet_id", "item_language", "position", "item_id",
    "prompt_language", "shots", "shuffle", "permutation", "prob_a", "prob_b", "prob_c", "prob_d",
    "prob_e", "letter_mass", "choice", "correct",
)
SCORE_COLUMNS = (
    "run_id", "year", "area", "booklet_id", "item_language", "prompt_language", "shots",
    "shuffle", "response_pattern", "theta", "theta_se", "lz", "lz_star", "ctt", "n_scored", "nota",
)
#: In a stored ``permutation`` (the original option shown under each letter A–E), a letter
#: whose original option the source did not record: the paper's shuffle file gives, per answer,
#: only where the key and the chosen option were shown (``?C??A``: original C under B, A under E).
UNRECORDED_OPTION = "?"
#: Score columns only imported results carry: the sampling seed of a repetition and the
#: published θ, SE and l_z kept beside the project's own re-scoring.
PUBLISHED_SCORE_COLUMNS = ("sampling_seed", "published_theta", "published_se", "published_lz")
#: How a run's repetitions differ: option orders (our runs, the paper's shuffle file) or
#: sampling seeds with the options in their original order (the paper's main file).
REPETITION_KINDS = {"shuffle": "shuffles", "seed": "seeds"}
#: DuckDB's memory limit while an import appends a run's rows (``bulk_import``).
IMPORT_MEMORY_LIMIT = "1GB"


def run_label(model_id: str, prompt_type: str, n_repetitions: int | None,
              repetition: str = "shuffle") -> str:
    """How pages name a run: ``llama2-13b · few-shot · 30 seeds``."""
    count = f"{n_repetitions} {REPETITION_KINDS.get(repetition, repetition)}" \
        if n_repetitions else REPETITION_KINDS.get(repetition, repetition)
    return " · ".join(part for part in (model_id, prompt_type, count) if part)


def _unique_label(con: duckdb.DuckDBPyConnection, run: dict, label: str) -> str:
    """``label``, made distinct from every other run's: pages compare runs by label, and two
    runs of one model with the same settings must never be pooled silently. The run's seed is
    added when that tells them apart, else the end of its run id."""
    def taken(candidate: str) -> bool:
        return one_row(con.execute(
            "SELECT count(*) > 0 FROM model_runs WHERE label = ? AND run_id <> ?",
            [candidate, run["run_id"]]))[0]

    if not taken(label):
        return label
    if run.get("seed") is not None and not taken(seeded := f"{label} · seed {run['seed']}"):
        return seeded
    return f"{label} · run {str(run['run_id'])[-8:]}"


def shots_prompt_type(shots) -> str:
    """The prompt type of one of our runs from its shot settings: ``0-shot``, ``0/1/4-shot``."""
    return "/".join(str(s) for s in shots) + "-shot" if len(shots) else ""


def default_booklet(con: duckdb.DuckDBPyConnection, year: int, area: str) -> int:
    """The valid booklet of an area with the lowest CO_PROVA (ValueError if none)."""
    row = con.execute(
        "SELECT min(booklet_id) FROM booklets WHERE year = ? AND area = ? AND valid",
        [year, area],
    ).fetchone()
    if row is None or row[0] is None:
        raise ValueError(f"no scoreable booklet for {year} {area}; ingest that year first")
    return int(row[0])


def load_form(con: duckdb.DuckDBPyConnection, year: int, booklet_id: int,
              item_language: int | None) -> BookletForm:
    """A booklet form rebuilt from the ``items`` table, in response-string order.

    Rows without a ``position`` are not part of any form (the second listing of a doubly
    listed booklet); a 2020 digital LC booklet keeps the version of ``item_language``.
    """
    rows = con.execute(
        """SELECT area, co_posicao, item_id, key, a, b, c, colour, item_language
           FROM items WHERE year = $year AND booklet_id = $booklet AND position IS NOT NULL
             AND (item_language IS NULL OR item_language = $language)
             AND (version IS NULL OR version = $language)
           ORDER BY co_posicao""",
        {"year": year, "booklet": booklet_id, "language": item_language},
    ).df()
    if rows.empty:
        raise ValueError(f"booklet {booklet_id} of {year} is not in the store")
    bilingual = rows["item_language"].notna().any()
    return build_form(booklet_id, item_language if bilingual else None, rows)


def year_scoring_options(con: duckdb.DuckDBPyConnection, year: int) -> ScoringOptions:
    """The scoring settings of a year's latest ingest (its humans' scale), INEP's recipe
    (``DEFAULT_OPTIONS``) when the year was stored without any."""
    row = con.execute(
        "SELECT scoring FROM ingests WHERE year = ? ORDER BY ingest_id DESC LIMIT 1", [int(year)]
    ).fetchone()
    return ScoringOptions.from_stored(None if row is None else row[0])


def question_texts(con: duckdb.DuckDBPyConnection, year: int, item_ids: list[int],
                   language: str) -> pd.DataFrame:
    """Texts of the given items in one language: item_id, stem, option_a..e, key, annulled."""
    return con.execute(
        """SELECT item_id, stem, option_a, option_b, option_c, option_d, option_e, key, annulled
           FROM question_texts WHERE year = ? AND language = ? AND list_contains(?, item_id)""",
        [year, language, item_ids],
    ).df()


def easiest_items(con: duckdb.DuckDBPyConnection, language: str, exclude_year: int | None
                  ) -> pd.DataFrame:
    """Candidate shot examples: per area, items with texts and parameters, easiest first."""
    return con.execute(
        """SELECT DISTINCT i.year, i.area, i.item_id, i.b, q.stem, q.option_a, q.option_b,
                  q.option_c, q.option_d, q.option_e, q.key
           FROM items i JOIN question_texts q ON q.year = i.year AND q.item_id = i.item_id
           WHERE q.language = ? AND NOT q.annulled AND i.b IS NOT NULL
             AND (? IS NULL OR i.year <> ?)
           ORDER BY i.area, i.b, i.item_id""",
        [language, exclude_year, exclude_year],
    ).df()


def booklet_area(con: duckdb.DuckDBPyConnection, year: int, booklet_id: int) -> str | None:
    """The area of a stored booklet, None when the booklet is not in the store."""
    row = con.execute("SELECT area FROM booklets WHERE year = ? AND booklet_id = ?",
                      [int(year), int(booklet_id)]).fetchone()
    return None if row is None else str(row[0])


def stored_run(con: duckdb.DuckDBPyConnection, run_id: str
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """One run as stored: its ``model_runs`` row, its ``models`` row and its responses
    (ordered). ValueError when the run is not in the store."""
    run = con.execute("SELECT * FROM model_runs WHERE run_id = ?", [run_id]).df()
    if run.empty:
        raise ValueError(f"no run {run_id!r} in the store")
    model = con.execute("SELECT * FROM models WHERE model_id = ?", [run["model_id"][0]]).df()
    responses = con.execute(
        "SELECT * FROM model_responses WHERE run_id = ? ORDER BY ALL", [run_id]).df()
    return run, model, responses


def published_scores(con: duckdb.DuckDBPyConnection, run_id: str) -> pd.DataFrame:
    """What an imported run keeps from its source beside our scores: year, booklet_id,
    prompt_language, shuffle and the ``PUBLISHED_SCORE_COLUMNS`` (no rows for our own runs)."""
    return con.execute(
        """SELECT year, booklet_id, prompt_language, shuffle, sampling_seed, published_theta,
                  published_se, published_lz
           FROM model_scores WHERE run_id = ?
             AND NOT (sampling_seed IS NULL AND published_theta IS NULL
                      AND published_se IS NULL AND published_lz IS NULL)
           ORDER BY year, booklet_id, prompt_language, shuffle""",
        [run_id],
    ).df()


class ExamReader:
    """The exam as a run plan reads it (``inference.plan.ExamSource``), over an open connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def default_booklet(self, year: int, area: str) -> int:
        return default_booklet(self.con, year, area)

    def load_form(self, year: int, booklet_id: int, item_language: int | None) -> BookletForm:
        return load_form(self.con, year, booklet_id, item_language)

    def question_texts(self, year: int, item_ids: list[int], language: str) -> pd.DataFrame:
        return question_texts(self.con, year, item_ids, language)

    def easiest_items(self, language: str, exclude_year: int | None) -> pd.DataFrame:
        return easiest_items(self.con, language, exclude_year)


def publish_run(con: duckdb.DuckDBPyConnection, run: dict, model: dict,
                responses: pd.DataFrame, scores: pd.DataFrame,
                min_k: pd.DataFrame | None = None) -> None:
    """Replace everything stored for ``run['run_id']`` with these rows, in one transaction."""
    con.execute("BEGIN TRANSACTION")
    try:
        begin_run(con, run, model)
        append_run_rows(con, responses, scores)
        if min_k is not None and len(min_k):
            con.execute(
                "DELETE FROM min_k_prob WHERE model_id = ? AND year = ?",
                [model["model_id"], run["year"]],
            )
            insert_rows(con, "min_k_prob", min_k[["model_id", "year", "item_id", "language",
                                                  "k_percent", "value"]])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def begin_run(con: duckdb.DuckDBPyConnection, run: dict, model: dict) -> None:
    """Remove every row stored for ``run['run_id']`` and store its ``models`` and
    ``model_runs`` rows; its answers and scores follow with :func:`append_run_rows`. The caller
    holds the transaction (an import streams a run's rows in several appends)."""
    run_id = run["run_id"]
    for table in ("model_responses", "model_scores", "model_runs"):
        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    # A run that names no family, size or tuning (the Runs page's form left blank) keeps what
    # the model's earlier runs stored: the sidebar groups runs by family.
    con.execute(
        """INSERT INTO models VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (model_id) DO UPDATE SET
               family = coalesce(excluded.family, family),
               size = coalesce(excluded.size, size),
               instruction_tuned = coalesce(excluded.instruction_tuned, instruction_tuned),
               notes = coalesce(excluded.notes, notes)""",
        [model["model_id"], model.get("family"), model.get("size"),
         model.get("instruction_tuned"), model.get("notes")],
    )
    repetition = run.get("repetition") or "shuffle"
    prompt_type = run.get("prompt_type") or shots_prompt_type(
        [s for s in run["shots"] if s is not None])
    years = run.get("years") or [run["year"]]
    con.execute(
        """INSERT INTO model_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                                          ?, ?, ?, ?, ?, ?, ?)""",
        [run_id, model["model_id"], run["backend"], run["origin"], run["year"],
         ",".join(run["areas"]), ",".join(run["languages"]),
         ",".join(str(s) for s in run["shots"]), run.get("n_shuffles"), run.get("seed"),
         run["status"], run.get("created_at"), run.get("finished_at"), run.get("error"),
         json.dumps(run.get("options", {}), sort_keys=True, default=str),
         ",".join(str(y) for y in years), repetition, prompt_type, run.get("temperature"),
         run.get("source"),
         json.dumps(run["scoring"], sort_keys=True) if run.get("scoring") else None,
         _unique_label(con, run, run.get("label") or run_label(
             model["model_id"], prompt_type, run.get("n_shuffles"), repetition))],
    )


def append_run_rows(con: duckdb.DuckDBPyConnection, responses: pd.DataFrame | pa.Table | None,
                    scores: pd.DataFrame | pa.Table | None) -> None:
    """Append answers (``RESPONSE_COLUMNS``, and ``answer_text`` when given) and scores
    (``SCORE_COLUMNS``, and any ``PUBLISHED_SCORE_COLUMNS`` given) of a run begun with
    :func:`begin_run`. Pandas frames or Arrow tables; other columns are left out."""
    if responses is not None and len(responses):
        generated = [c for c in ("answer_text",) if c in _names(responses)]
        insert_rows(con, "model_responses", _columns(responses, list(RESPONSE_COLUMNS) + generated))
    if scores is not None and len(scores):
        extra = [c for c in PUBLISHED_SCORE_COLUMNS if c in _names(scores)]
        insert_rows(con, "model_scores", _columns(scores, list(SCORE_COLUMNS) + extra))


def insert_responses_from_parquet(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Append the ``RESPONSE_COLUMNS`` of every row of a Parquet file (a run export) to
    ``model_responses``, read by DuckDB in a stream; returns the rows appended."""
    columns = ", ".join(RESPONSE_COLUMNS)
    return one_row(con.execute(
        f"""INSERT INTO model_responses BY NAME
            SELECT {columns} FROM read_parquet($path)""", {"path": str(path)}))[0]


def export_run_ids(con: duckdb.DuckDBPyConnection, path: Path, run_id: str) -> list[str]:
    """The run ids of a run export's rows other than ``run_id`` (none in a sound export)."""
    return [r[0] for r in con.execute(
        """SELECT DISTINCT CAST(run_id AS VARCHAR) FROM read_parquet($path)
           WHERE run_id IS DISTINCT FROM $run ORDER BY 1""",
        {"path": str(path), "run": run_id}).fetchall()]


def parquet_groups(con: duckdb.DuckDBPyConnection, path: Path) -> list[tuple[int, int]]:
    """The distinct (year, booklet_id) of a run export's rows, sorted."""
    return [(int(y), int(b)) for y, b in con.execute(
        """SELECT DISTINCT year, booklet_id FROM read_parquet($path) ORDER BY ALL""",
        {"path": str(path)}).fetchall()]


def parquet_group_rows(con: duckdb.DuckDBPyConnection, path: Path, year: int,
                       booklet_id: int) -> pd.DataFrame:
    """The rows of one (year, booklet) of a run export with the columns scoring reads."""
    return con.execute(
        """SELECT run_id, year, area, booklet_id, item_language, position, item_id,
                  prompt_language, shots, shuffle, correct
           FROM read_parquet($path) WHERE year = $year AND booklet_id = $booklet""",
        {"path": str(path), "year": year, "booklet": booklet_id}).df()


@contextmanager
def bulk_import(con: duckdb.DuckDBPyConnection, memory_limit: str = IMPORT_MEMORY_LIMIT
                ) -> Iterator[None]:
    """One transaction for a whole import (nothing of it is kept when the block raises), with
    DuckDB's memory held to ``memory_limit`` meanwhile: a file of a million patterns appends
    45 million answers, which DuckDB would otherwise keep cached up to most of the machine's
    memory. The previous limit is restored afterwards."""
    previous = one_row(con.execute(
        """SELECT current_setting('memory_limit'),
                  current_setting('enable_progress_bar')"""))
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute("SET enable_progress_bar = false")  # DuckDB's own bar would draw on stderr
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.execute(f"SET memory_limit = '{previous[0]}'")
        con.execute(f"SET enable_progress_bar = {bool(previous[1])}")


def _names(rows: pd.DataFrame | pa.Table) -> list[str]:
    return list(rows.column_names if isinstance(rows, pa.Table) else rows.columns)


def _columns(rows: pd.DataFrame | pa.Table, names: list[str]) -> pd.DataFrame | pa.Table:
    return rows.select(names) if isinstance(rows, pa.Table) else rows[names]
