"""The results published with the paper *Beyond accuracy* (one parquet row per model run of one
exam), imported as runs of this project.

A paper file holds one run per model × prompt type × temperature × kind of repetition (sampling
seeds or option shuffles). Its run ids are derived from the file's content and those keys, so
importing the same file again replaces its runs with identical rows, and another file (another
content) never touches them. The rules are in docs/methods.md, "Published results".

The file is read in record batches of BATCH_ROWS rows, three times, so memory follows the batch
and not the file (a million rows become 45 million stored answers):

1. every row is checked (one bad value refuses the file, naming its column, value and row,
   before anything is stored) and each run's keys, seeds, years and booklets are counted;
2. the content digest (``content_digest``) is taken from sorted runs of row lines kept on disk
   and merged, which gives exactly the digest of the whole table at once;
3. the runs are stored, then each batch's answers and scores are appended to them.

The caller holds the transaction (``store.model_runs.bulk_import``): a file refused or failing
midway leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import re
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from enem.areas import OPTION_LETTERS
from enem.items import BookletForm
from enem.microdata import BOOKLET_ID_MAX
from enem.pattern_files import whole_number
from enem.scoring import ScoringOptions, score_form
from inference.plan import model_slug
from inference.protocol import LANGUAGE_ALIASES
from store.model_runs import (
    UNRECORDED_OPTION,
    append_run_rows,
    begin_run,
    booklet_area,
    load_form,
    run_label,
)
from workflows.imported_runs import (
    PUBLISHED_SCORES,
    ImportedRun,
    ImportSummary,
    ResultsFormatError,
    fold_published,
    run_scoring_options,
)

#: Columns a parquet file needs to be read as the paper's results.
PAPER_COLUMNS = ("MODEL_NAME", "LANGUAGE", "SEED", "CO_PROVA", "EXAM_YEAR", "RESPONSE_PATTERN")
#: What makes two published rows belong to different runs (besides the file they come from).
RUN_KEYS = ["model_id", "prompt_type", "temperature", "repetition"]
#: The paper answered the Spanish LC items (TP_LINGUA 1).
PAPER_LC_LANGUAGE = 1
#: Rows read, checked and stored at a time: about 45 times as many answers are built from them.
BATCH_ROWS = 20_000
#: Characters of a bad value quoted in an error.
SHOWN_CHARS = 40
#: The prompt languages of the stored rows and the codes the duplicate check keys them by.
_LANGUAGE_CODES = {language: code for code, language in
                   enumerate(sorted(set(LANGUAGE_ALIASES.values())))}


def import_paper(con, source: str, parquet: pq.ParquetFile, overrides: dict,
                 batch_rows: int = BATCH_ROWS) -> ImportSummary:
    """Every run of one paper file: all rows are checked before any run is stored; then the
    runs are stored batch by batch (see the module's docstring). ``con`` is in the caller's
    transaction."""
    table = PaperTable(parquet, batch_rows)
    census = _Census(con)
    for frame in table.frames():
        census.add(_paper_rows(frame))
    if not census.runs:
        raise ResultsFormatError(f"{source}: the file has no rows")
    census.check()
    digest = table.digest()
    built = census.build(source, digest, overrides)
    for run in built:
        begin_run(con, run.run, run.model)
    summary = ImportSummary(
        source, [ImportedRun(b.run["run_id"], b.run["label"], b.run["repetition"], b.rows)
                 for b in built],
        sorted(census.years), len(census.booklets),
        list(dict.fromkeys(ScoringOptions.from_dict(b.run["scoring"]) for b in built)))
    by_keys = {b.keys: b for b in built}
    for frame in table.frames():
        rows = _paper_rows(frame)
        for keys, group in rows.groupby("_run", sort=False):
            run = by_keys[keys]
            for (year, booklet), part in group.groupby(["year", "booklet_id"], sort=False):
                form = census.forms[(int(year), int(booklet))]
                responses, scores = _booklet_rows(run, form, part)
                append_run_rows(con, responses, scores)
                fold_published(summary, scores)
    summary.key_differences = list(dict.fromkeys(
        d for b in built for d in b.run["options"]["key_differences"]))
    return summary


class PaperTable:
    """A results file read in record batches, each as the pandas frame of its rows with the
    column types that reading the whole file at once gives (an integer column with a null
    anywhere in the file is float in every batch), indexed by row number (1 = first row)."""

    def __init__(self, parquet: pq.ParquetFile, batch_rows: int = BATCH_ROWS):
        self.parquet = parquet
        self.batch_rows = max(1, int(batch_rows))
        self.schema = parquet.schema_arrow
        self._widened = self._integers_with_nulls()

    def _integers_with_nulls(self) -> set[str]:
        names = [f.name for f in self.schema if pa.types.is_integer(f.type)]
        if not names:
            return set()
        nulls = dict.fromkeys(names, 0)
        for batch in self.parquet.iter_batches(batch_size=1 << 16, columns=names):
            for name in names:
                nulls[name] += batch.column(name).null_count
        return {name for name, count in nulls.items() if count}

    def frames(self) -> Iterator[pd.DataFrame]:
        """The file's rows, BATCH_ROWS at a time."""
        start = 1
        for batch in self.parquet.iter_batches(batch_size=self.batch_rows):
            frame = pa.Table.from_batches([batch]).replace_schema_metadata(
                self.schema.metadata).to_pandas()
            for name in self._widened & set(frame.columns):
                # A numpy integer column (no null in this batch); pandas' own nullable Int64,
                # restored from a file's pandas metadata, is kept as the whole file keeps it.
                if isinstance(frame[name].dtype, np.dtype) and frame[name].dtype.kind in "iu":
                    frame[name] = frame[name].astype(float)
            frame.index = pd.RangeIndex(start, start + len(frame))
            start += len(frame)
            yield frame

    def digest(self) -> str:
        """``content_digest`` of the whole file, from sorted runs of its row lines kept on
        disk (one per batch) and merged."""
        with tempfile.TemporaryDirectory(prefix="enem-llm-digest-") as folder:
            runs, columns = [], None
            for index, frame in enumerate(self.frames()):
                columns, lines = _row_lines(frame)
                path = Path(folder) / f"{index}.lines"
                with open(path, "wb") as handle:
                    for line in lines:
                        handle.write(struct.pack(">I", len(line)))
                        handle.write(line)
                runs.append(path)
            return _digest(columns or [], heapq.merge(*(_read_lines(p) for p in runs)))


def content_digest(frame: pd.DataFrame) -> str:
    """SHA-256 of a table's content, independent of row and column order, file name and
    Parquet encoding: the identity of a results file in its run ids."""
    columns, lines = _row_lines(frame)
    return _digest(columns, iter(lines))


def _row_lines(frame: pd.DataFrame) -> tuple[list[str], list[bytes]]:
    """(sorted column names, each row's cells joined by U+001F as UTF-8, sorted)."""
    columns = sorted(frame.columns)
    cells = frame[columns].astype(object).where(frame[columns].notna(), "")
    return columns, sorted("\x1f".join(str(v) for v in row).encode()
                           for row in cells.itertuples(index=False))


def _digest(columns: list[str], lines: Iterator[bytes]) -> str:
    # Sorting UTF-8 bytes orders lines as sorting the strings does (by code point).
    digest = hashlib.sha256("\x1f".join(columns).encode())
    for line in lines:
        digest.update(b"\x1e" + line)
    return digest.hexdigest()


def _read_lines(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while head := handle.read(4):
            yield handle.read(struct.unpack(">I", head)[0])


# --- rows: typed and checked --------------------------------------------------------------------

def _bad(column: str, value, row: int, expected: str) -> ResultsFormatError:
    shown = "null" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else repr(value if not isinstance(value, str) else value[:SHOWN_CHARS])
    return ResultsFormatError(f"{column} {shown} in row {row:,} is not {expected}")


def _first_bad(values: pd.Series, bad: pd.Series, column: str, expected: str) -> None:
    if bad.any():
        row = bad.idxmax()
        raise _bad(column, values[row], int(row), expected)


def _whole_column(values: pd.Series, column: str, expected: str, limit: int,
                  missing_ok: bool = False) -> pd.Series:
    """A column of whole numbers (``2022``, ``2022.0``, "2022") up to ±``limit`` as Int64 (NA
    where missing, when ``missing_ok``); the first other value is a ResultsFormatError naming
    its row. ``2341.6`` is never rounded."""
    numbers = [_whole(v, limit) for v in values]
    parsed = pd.Series(pd.array(numbers, dtype="Int64"), index=values.index)
    bad = parsed.isna()
    if missing_ok:
        bad &= ~values.isna()
    _first_bad(values, bad, column, expected)
    return parsed


def _whole(value, limit: int) -> int | None:
    """``value`` as a whole number within ±``limit``, else None."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return None
    number: int | None
    if isinstance(value, (int, np.integer)):
        number = int(value)
    elif isinstance(value, (float, np.floating)):
        if not math.isfinite(value) or value != math.floor(value):
            return None
        number = int(value)
    else:
        number = whole_number(str(value))
    return number if number is not None and abs(number) <= limit else None


def _numbers(values: pd.Series) -> pd.Series:
    """Numeric values as float, NaN where not a number (strings parsed)."""
    return pd.to_numeric(values, errors="coerce").astype(float)


def _paper_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The published rows of one batch with the run keys and the place of each row, every
    value checked; the index is the row number in the file."""
    rows = frame.copy()
    names = rows["MODEL_NAME"]
    empty = names.isna() | (names.astype(str).str.strip() == "")
    _first_bad(names, empty, "MODEL_NAME", "a model name")
    size = rows["MODEL_SIZE"] if "MODEL_SIZE" in rows else pd.Series("", index=rows.index)
    rows["model_id"] = [paper_model_id(name, sz) for name, sz in zip(names, size, strict=True)]
    rows["prompt_type"] = (rows["SYSTEM_PROMPT_TYPE"].fillna("").astype(str)
                           if "SYSTEM_PROMPT_TYPE" in rows else "")
    # Object dtype keeps None (no temperature) from turning into NaN, which equals nothing.
    rows["temperature"] = pd.Series(_temperatures(rows), index=rows.index, dtype=object)
    rows["repetition"] = _repetition_kinds(rows)
    rows["prompt_language"] = rows["LANGUAGE"].astype(str).str.lower().map(LANGUAGE_ALIASES)
    _first_bad(rows["LANGUAGE"], rows["prompt_language"].isna(), "LANGUAGE",
               f"a prompt language ({', '.join(sorted(LANGUAGE_ALIASES))})")
    rows["year"] = _whole_column(rows["EXAM_YEAR"], "EXAM_YEAR", "a year (a whole number)",
                                 9999).astype("int64")
    rows["booklet_id"] = _whole_column(
        rows["CO_PROVA"], "CO_PROVA", f"a booklet id (a whole number up to {BOOKLET_ID_MAX:,})",
        BOOKLET_ID_MAX).astype("int64")
    rows["seed"] = _whole_column(rows["SEED"], "SEED", "a sampling seed (a whole number)",
                                 2**63 - 1, missing_ok=True)
    for column in PUBLISHED_SCORES:
        if column in rows:
            published = _numbers(rows[column])
            _first_bad(rows[column], ~np.isfinite(published), column, "a finite number")
            rows[column] = published
    patterns = rows["RESPONSE_PATTERN"]
    _first_bad(patterns, patterns.isna(), "RESPONSE_PATTERN", "a pattern of 0 and 1")
    rows["shuffle_k"] = np.where(rows["repetition"] == "shuffle", _shuffle_numbers(rows), -1)
    rows["_run"] = list(zip(rows["model_id"], rows["prompt_type"], rows["temperature"],
                            rows["repetition"], strict=True))
    return rows


def _temperatures(rows: pd.DataFrame) -> list:
    """TEMPERATURE as a float ≥ 0, None where not given (no column, null or NaN); any other
    value (``hot``, ``inf``, ``-1``) is a ResultsFormatError naming its row."""
    if "TEMPERATURE" not in rows:
        return [None] * len(rows)
    values = rows["TEMPERATURE"]
    given = values.notna() & (values.astype(str).str.strip() != "")
    parsed = _numbers(values)
    _first_bad(values, given & ~(np.isfinite(parsed) & (parsed >= 0)), "TEMPERATURE",
               "a temperature (a number ≥ 0)")
    return [float(t) if ok else None for t, ok in zip(parsed, given, strict=True)]


def paper_model_id(name, size) -> str:
    """MODEL_NAME + MODEL_SIZE: ``llama2-13b``; the name alone when the size is empty."""
    size = "" if size is None or pd.isna(size) else str(size).strip()
    return f"{str(name).strip()}-{size}" if size else str(name).strip()


def _repetition_kinds(rows: pd.DataFrame) -> np.ndarray:
    """'shuffle' for ENEM_EXAM_TYPE ``shuffle-<k>``, 'seed' for ``default`` (or no column)."""
    if "ENEM_EXAM_TYPE" not in rows:
        return np.full(len(rows), "seed")
    kinds = rows["ENEM_EXAM_TYPE"].fillna("default").astype(str).str.strip().str.lower()
    shuffle = kinds.str.fullmatch(r"shuffle-\d{1,9}")
    unknown = ~(shuffle | (kinds == "default"))
    _first_bad(rows["ENEM_EXAM_TYPE"], unknown, "ENEM_EXAM_TYPE",
               "'default' (sampling seeds) or 'shuffle-<k>'")
    return np.where(shuffle, "shuffle", "seed")


def _shuffle_numbers(rows: pd.DataFrame) -> np.ndarray:
    """k of ENEM_EXAM_TYPE ``shuffle-<k>`` (-1 in other rows)."""
    if "ENEM_EXAM_TYPE" not in rows:
        return np.full(len(rows), -1)
    found = rows["ENEM_EXAM_TYPE"].astype(str).str.extract(r"(\d+)\s*$")[0]
    return pd.to_numeric(found, errors="coerce").fillna(-1).astype("int64").to_numpy()


def paper_run_id(digest: str, keys: dict) -> str:
    """``paper-<model>-<seed|shuffle>-<10 hex>``: the hex digest covers the file's content and
    the run keys, so it is the same on every import of one file and differs between files."""
    described = json.dumps([digest, *(_plain(keys[k]) for k in RUN_KEYS)])
    short = hashlib.sha256(described.encode()).hexdigest()[:10]
    return f"paper-{model_slug(keys['model_id'])}-{keys['repetition']}-{short}"


def _plain(value):
    """A run key as JSON: NaN (no temperature) is null."""
    return None if isinstance(value, float) and np.isnan(value) else value


# --- pass 1: what each run holds ----------------------------------------------------------------

@dataclass
class _RunCensus:
    """What the file holds of one run: rows, the first row's model columns, the seeds or
    shuffle numbers, years, booklets, areas, prompt languages, the pattern keys (to find rows
    that would land twice) and the answer-key differences found, in file order."""

    keys: tuple
    rows: int = 0
    model: dict = field(default_factory=dict)
    seeds: list[np.ndarray] = field(default_factory=list)
    no_seed: int = 0
    first_without_seed: int | None = None
    years: set = field(default_factory=set)
    booklets: set = field(default_factory=set)
    areas: set = field(default_factory=set)
    languages: set = field(default_factory=set)
    pattern_keys: list[np.ndarray] = field(default_factory=list)
    differences: dict = field(default_factory=dict)
    gabaritos: dict = field(default_factory=dict)


@dataclass
class _BuiltRun:
    """A run ready to store: its keys, ``model_runs`` and ``models`` rows, the sorted seeds
    that number a seed run's repetitions, and its rows."""

    keys: tuple
    run: dict
    model: dict
    seeds: np.ndarray
    rows: int


class _Census:
    """Pass 1: checks every batch of rows and counts what each run holds."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.runs: dict[tuple, _RunCensus] = {}
        self.forms: dict[tuple[int, int], BookletForm] = {}
        self.years: set[int] = set()
        self.booklets: set[tuple[int, int]] = set()
        self.temperatures: set = set()

    def add(self, rows: pd.DataFrame) -> None:
        for (year, booklet), part in rows.groupby(["year", "booklet_id"], sort=False):
            form = self._form(int(year), int(booklet), part)
            _check_patterns(form, part)
        self.temperatures.update(rows["temperature"])
        for keys, group in rows.groupby("_run", sort=False):
            run = self.runs.get(keys)
            if run is None:
                run = self.runs[keys] = _RunCensus(keys)
                first = group.iloc[0]
                run.model = {"MODEL_NAME": first["MODEL_NAME"],
                             "MODEL_SIZE": first.get("MODEL_SIZE")}
            self._count(run, group)

    def _count(self, run: _RunCensus, group: pd.DataFrame) -> None:
        run.rows += len(group)
        years, booklets = group["year"].to_numpy(), group["booklet_id"].to_numpy()
        pairs = set(zip(years.tolist(), booklets.tolist(), strict=True))
        run.years.update(years.tolist())
        run.booklets.update(pairs)
        self.years.update(years.tolist())
        self.booklets.update(pairs)
        run.areas.update(self.forms[p].area for p in pairs)
        run.languages.update(group["prompt_language"])
        if run.keys[3] == "seed":
            seeds = group["seed"]
            if seeds.isna().any():
                run.no_seed += int(seeds.isna().sum())
                if run.first_without_seed is None:
                    run.first_without_seed = int(seeds.index[seeds.isna().to_numpy()][0])
            repetition = seeds.fillna(-1).to_numpy(np.int64)
            run.seeds.append(np.unique(seeds.dropna().to_numpy(np.int64)))
        else:
            repetition = group["shuffle_k"].to_numpy(np.int64)
        languages = group["prompt_language"].map(_LANGUAGE_CODES).to_numpy(np.int64)
        run.pattern_keys.append(np.column_stack([years.astype(np.int64),
                                                 booklets.astype(np.int64), languages,
                                                 repetition]))
        if "TX_GABARITO" in group:
            for pair, part in group.groupby(["year", "booklet_id"], sort=False):
                seen = run.gabaritos.setdefault(pair, set())
                messages = run.differences.setdefault(pair, {})
                for key in part["TX_GABARITO"].dropna().astype(str).unique():
                    if key not in seen:
                        seen.add(key)
                        messages.update(dict.fromkeys(
                            _key_differences(int(pair[0]), self.forms[pair], key)))

    def _form(self, year: int, booklet: int, rows: pd.DataFrame) -> BookletForm:
        """The stored form a published booklet was answered on (LC: the Spanish one)."""
        form = self.forms.get((year, booklet))
        if form is None:
            area = booklet_area(self.con, year, booklet)
            if area is None:
                raise ResultsFormatError(
                    f"booklet {booklet} of {year} (row {rows.index[0]:,}) is not in the store; "
                    "ingest that year's ITENS_PROVA first (`enem-llm ingest-items`)")
            form = load_form(self.con, year, booklet, PAPER_LC_LANGUAGE if area == "LC" else None)
            self.forms[(year, booklet)] = form
        if "EXAM_SUBJECT" in rows:
            named = rows["EXAM_SUBJECT"].dropna().astype(str)
            other = named[named != form.area]
            if len(other):
                raise ResultsFormatError(
                    f"booklet {booklet} of {year} is {form.area} in the store, the file says "
                    f"{', '.join(sorted(set(other)))} (row {other.index[0]:,})")
        return form

    def check(self) -> None:
        """Refuse seed runs with rows that have no SEED, and rows that would land twice."""
        for run in self.runs.values():
            model, repetition = run.keys[0], run.keys[3]
            if run.no_seed:
                raise ResultsFormatError(
                    f"{run.no_seed} row(s) of a seed run have no SEED (the first: row "
                    f"{run.first_without_seed:,})")
            keys = np.concatenate(run.pattern_keys)
            _, counts = np.unique(keys, axis=0, return_counts=True)
            clash = int(counts[counts > 1].sum())
            if clash:
                raise ResultsFormatError(
                    f"{model} ({repetition}): {clash} rows share a year, booklet, language and "
                    "repetition; each published row must land once")

    def build(self, source: str, digest: str, overrides: dict) -> list[_BuiltRun]:
        """The runs to store, in the order of their keys (no temperature last)."""
        several_temperatures = len(self.temperatures) > 1
        built = []
        for keys in sorted(self.runs, key=_key_order):
            run = self.runs[keys]
            named = dict(zip(RUN_KEYS, keys, strict=True))
            seeds = (np.unique(np.concatenate(run.seeds)) if run.seeds
                     else np.empty(0, np.int64))
            n_repetitions = (len(seeds) if keys[3] == "seed" else
                             len(np.unique(np.concatenate(run.pattern_keys)[:, 3])))
            options = run_scoring_options(self.con, sorted(run.years), overrides)
            shots = _shots(named["prompt_type"])
            years = sorted(int(y) for y in run.years)
            differences = [d for pair in sorted(run.differences) for d in run.differences[pair]]
            record = {
                "run_id": paper_run_id(digest, named), "backend": "imported",
                "origin": "paper", "year": years[0], "years": years,
                "areas": sorted(run.areas), "languages": sorted(run.languages),
                "shots": [] if shots is None else [shots], "n_shuffles": n_repetitions,
                "seed": None, "status": "finished", "repetition": named["repetition"],
                "prompt_type": named["prompt_type"], "temperature": named["temperature"],
                "source": source, "scoring": options.as_dict(),
                "label": _paper_label(named, n_repetitions, several_temperatures),
                "options": {"published": {k: _plain(v) for k, v in named.items()},
                            "content_sha256": digest, "key_differences": differences}}
            built.append(_BuiltRun(keys, record, _paper_model(named["model_id"], run.model),
                                   seeds, run.rows))
        return built


def _key_order(keys: tuple) -> tuple:
    """Runs in the order of their keys, a run without temperature after those with one."""
    model_id, prompt_type, temperature, repetition = keys
    return (model_id, prompt_type, temperature is None, temperature or 0.0, repetition)


def _check_patterns(form: BookletForm, rows: pd.DataFrame) -> None:
    """Each RESPONSE_PATTERN must be the form's items as 0/1."""
    patterns = rows["RESPONSE_PATTERN"].astype(str)
    wrong = ~(patterns.str.len().eq(form.n_items) & patterns.str.fullmatch("[01]*"))
    if wrong.any():
        row = wrong.idxmax()
        raise ResultsFormatError(
            f"booklet {form.booklet_id}: RESPONSE_PATTERN {patterns[row][:60]!r} in row "
            f"{row:,} is not {form.n_items} characters 0/1")


def _paper_label(keys: dict, n_repetitions: int, several_temperatures: bool) -> str:
    """``llama2-13b · few-shot · 30 seeds``, plus the temperature when the file holds several
    (the only run key a label would otherwise leave out)."""
    label = run_label(keys["model_id"], keys["prompt_type"], n_repetitions, keys["repetition"])
    if several_temperatures:
        temperature = _plain(keys["temperature"])
        label += f" · T {temperature:g}" if temperature is not None else " · T ?"
    return label


def _paper_model(model_id: str, row: dict) -> dict:
    """The ``models`` row of a published model: family MODEL_NAME, size MODEL_SIZE."""
    size = row.get("MODEL_SIZE")
    return {"model_id": model_id, "family": str(row["MODEL_NAME"]),
            "size": None if size is None or pd.isna(size) else str(size),
            "notes": "imported from published results"}


def _shots(prompt_type) -> int | None:
    """The number of solved examples a prompt type names ("4-shot"), None when it names none
    ("few-shot")."""
    match = re.search(r"\d+", str(prompt_type or ""))
    return int(match.group()) if match else None


def _key_differences(year: int, form: BookletForm, key: str) -> list[str]:
    """Scored items whose key in one TX_GABARITO value of the file is not the stored key.

    Correctness always follows RESPONSE_PATTERN; a difference says the file was scored with
    another key than INEP's item file holds, which the summary reports.
    """
    stored = [chr(k) if k else "" for k in form.keys]
    return [f"{year} booklet {form.booklet_id} position {i + 1}: file {mine}, store {theirs}"
            for i, (mine, theirs) in enumerate(zip(key, stored, strict=False))
            if theirs in OPTION_LETTERS and mine != theirs and not np.isnan(form.bank.a[i])]


# --- pass 3: one batch's answers and scores -----------------------------------------------------

def _booklet_rows(run: _BuiltRun, form: BookletForm, rows: pd.DataFrame
                  ) -> tuple[pa.Table, pd.DataFrame]:
    """The ``model_responses`` rows (Arrow: 45 per published row) and the ``model_scores`` rows
    of one run's rows on one booklet. Correctness comes from RESPONSE_PATTERN (booklet order,
    abandoned items included), the chosen letter from TX_RESPOSTAS (original letters in both
    of the paper's files); the pattern is scored with the run's settings."""
    n, k = len(rows), form.n_items
    record = run.run
    shots = record["shots"][0] if record["shots"] else None
    if record["repetition"] == "seed":
        shuffle = np.searchsorted(run.seeds, rows["seed"].to_numpy(np.int64))
    else:
        shuffle = rows["shuffle_k"].to_numpy()
    patterns = rows["RESPONSE_PATTERN"].astype(str)
    correct = np.frombuffer("".join(patterns).encode("ascii"), np.uint8).reshape(n, k) == 49
    chosen = _letter_indices(rows, "TX_RESPOSTAS", k)
    choice = np.where(chosen >= 0, chosen + ord("A"), ord(".")).astype(np.uint8)
    languages = rows["prompt_language"].to_numpy(str)
    total = n * k
    responses = pa.table({
        "run_id": pa.repeat(record["run_id"], total),
        "year": pa.array(np.repeat(rows["year"].to_numpy(np.int32), k)),
        "area": pa.repeat(form.area, total),
        "booklet_id": pa.repeat(pa.scalar(form.booklet_id, pa.int32()), total),
        "item_language": pa.repeat(pa.scalar(form.language, pa.int16()), total),
        "position": pa.array(np.tile(np.arange(1, k + 1, dtype=np.int16), n)),
        "item_id": pa.array(np.tile(form.item_ids.astype(np.int64), n)),
        "prompt_language": pa.array(np.repeat(languages, k)),
        "shots": pa.repeat(pa.scalar(shots, pa.int16()), total),
        "shuffle": pa.array(np.repeat(shuffle.astype(np.int32), k)),
        "permutation": _shown_orders(rows, k, record["repetition"]),
        **{f"prob_{x.lower()}": pa.nulls(total, pa.float64()) for x in OPTION_LETTERS},
        "letter_mass": pa.nulls(total, pa.float64()),
        "choice": _characters(choice.ravel()),
        "correct": pa.array(correct.ravel()),
    })
    result = score_form(correct.astype(np.float64), form,
                        ScoringOptions.from_dict(record["scoring"]))
    scores = pd.DataFrame({
        "run_id": record["run_id"], "year": rows["year"].to_numpy(), "area": form.area,
        "booklet_id": form.booklet_id, "item_language": form.language,
        "prompt_language": languages, "shots": shots, "shuffle": shuffle,
        "response_pattern": patterns.to_numpy(),
        **{name: result[name] for name in ("theta", "theta_se", "lz", "lz_star", "ctt",
                                           "n_scored", "nota")},
        "sampling_seed": rows["seed"].astype("Int64").to_numpy(),
    })
    for column, name in PUBLISHED_SCORES.items():
        scores[name] = rows[column].to_numpy(float) if column in rows else np.nan
    return responses, scores


def _letter_indices(rows: pd.DataFrame, column: str, k: int) -> np.ndarray:
    """(n, k) the letters of a per-item column (``TX_RESPOSTAS``: character i is item i) as
    option indices 0..4 (A..E), -1 for anything else and where the column or a row is
    missing."""
    letters = (rows[column].fillna("").astype(str) if column in rows
               else pd.Series("", index=rows.index))
    codes = np.frombuffer("".join(s[:k].ljust(k, ".") for s in letters).encode("utf-32-le"),
                          np.uint32).reshape(len(rows), k).astype(np.int64)
    index = codes - ord(OPTION_LETTERS[0])
    return np.where((index >= 0) & (index < len(OPTION_LETTERS)), index, -1)


def _shown_orders(rows: pd.DataFrame, k: int, repetition: str) -> pa.StringArray:
    """(n·k,) the option order of each answer as ``permutation`` stores it: under each shown
    letter A–E the original letter shown there.

    A seed run (``ENEM_EXAM_TYPE`` default) showed the options in their original order,
    ``ABCDE``. A shuffle row records, per item, two pairs of letters: the key
    (``TX_GABARITO_SHUFFLE`` shown, ``TX_GABARITO`` original) and the choice
    (``TX_RESPOSTAS_SHUFFLE``, ``TX_RESPOSTAS``); those entries are filled in and the others
    are :data:`UNRECORDED_OPTION` (``?C??A``). An answer with neither pair, or whose two pairs
    contradict each other (one shown letter, two originals, or the reverse), stores NULL.
    """
    n = len(rows)
    if repetition == "seed":
        return pa.repeat(OPTION_LETTERS, n * k)
    pairs = [(_letter_indices(rows, shown, k), _letter_indices(rows, original, k))
             for shown, original in (("TX_GABARITO_SHUFFLE", "TX_GABARITO"),
                                     ("TX_RESPOSTAS_SHUFFLE", "TX_RESPOSTAS"))]
    usable = [(shown >= 0) & (original >= 0) for shown, original in pairs]
    (key_shown, key), (choice_shown, choice) = pairs
    contradict = usable[0] & usable[1] & ((key_shown == choice_shown) != (key == choice))
    orders = np.full((n, k, len(OPTION_LETTERS)), ord(UNRECORDED_OPTION), np.uint8)
    rows_, items_ = np.indices((n, k))
    for (shown, original), ok in zip(pairs, usable, strict=True):
        orders[rows_[ok], items_[ok], shown[ok]] = original[ok] + ord(OPTION_LETTERS[0])
    valid = ((usable[0] | usable[1]) & ~contradict).ravel()
    width = len(OPTION_LETTERS)
    offsets = np.concatenate([[0], np.cumsum(valid * width)]).astype(np.int32)
    data = orders.reshape(n * k, width)[valid].tobytes()
    return pa.StringArray.from_buffers(
        n * k, pa.py_buffer(offsets), pa.py_buffer(data),
        pa.array(valid).buffers()[1], int((~valid).sum()))


def _characters(codes: np.ndarray) -> pa.StringArray:
    """(n,) ASCII codes as n one-character strings."""
    offsets = np.arange(len(codes) + 1, dtype=np.int32)
    return pa.StringArray.from_buffers(len(codes), pa.py_buffer(offsets),
                                       pa.py_buffer(np.ascontiguousarray(codes).tobytes()))
