"""``score-patterns``: score a CSV of response patterns against an ITENS_PROVA file.

Each input row names its booklet (``CO_PROVA``) and carries either ``TX_RESPOSTAS`` (letters, as
in the microdata; ``TP_LINGUA`` for LC) or ``RESPONSE_PATTERN`` (0/1 in booklet order, abandoned
items included). The output is the same rows with THETA, THETA_SE, THETA_AT_BOUND, LZ, LZ_STAR,
CTT, NOTA and SCORE_ERROR (why a row could not be scored; empty otherwise) appended.

- The file is UTF-8 or Latin-1 text (``encoding="auto"``: UTF-8 when every byte of the file
  decodes as UTF-8, else Latin-1), its delimiter the most frequent of ``, ; TAB |`` in the header
  line. An empty file, a header without rows, a line with more or fewer fields than the header,
  or UTF-16 text is refused with a message that says which.
- ``CO_PROVA`` must be a whole number (``2341``, or ``2341.0`` as a spreadsheet writes it);
  anything else (``2341.5``, ``inf``, ``1e400``, …) is an error of that row only. ``TP_LINGUA``
  must be 0 or 1 where the booklet needs it.
- THETA_AT_BOUND is 1 when an ML or MAP estimate sits on the bound of its θ range (``--grid-range``;
  e.g. ML for a pattern all right or all wrong), where θ is set by the bound rather than the
  answers and its SE means little; 0 otherwise (always 0 for EAP, a posterior mean).

When the input also carries the official nota (``NU_NOTA``, or ``NU_NOTA_<area>`` as in a
microdata extract, the area being that of the row's booklet), the summary counts per booklet how
many official notas the scoring reproduced, as the ingest does.
"""

from __future__ import annotations

import codecs
import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from enem.areas import AREAS
from enem.csvfiles import MAX_LINE_BYTES, SCAN_BLOCK_BYTES, UnusableFileError
from enem.items import BookletForm, ItemsTable
from enem.rescoring import theta_at_bound
from enem.responses import (
    blank_rows,
    correctness,
    invalid_mark_rows,
    patterns_to_responses,
    select_language_block,
    strings_to_chars,
    unchosen_block_filled,
)
from enem.score_batches import BookletAudit, count_notas, unreproduced_lines
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions, score_form

OUTPUT_COLUMNS = ("THETA", "THETA_SE", "THETA_AT_BOUND", "LZ", "LZ_STAR", "CTT", "NOTA",
                  "SCORE_ERROR")
#: Input column with the official nota of every row, whatever its area.
OFFICIAL_NOTA_COLUMN = "NU_NOTA"
#: Encodings a patterns file may be read with; "auto" picks UTF-8 or Latin-1 (module docstring).
PATTERN_ENCODINGS = ("auto", "utf-8", "latin-1")
#: Delimiters a patterns file may use (the most frequent one in the header line wins).
DELIMITERS = (",", ";", "\t", "|")
#: DuckDB's own line limit, above MAX_LINE_BYTES: lines are checked against that first (with a
#: margin, as DuckDB counts a line end and quoting in its buffers).
_READER_LINE_BYTES = 2 * MAX_LINE_BYTES + 1024
#: A whole number, as CO_PROVA and TP_LINGUA must be: digits, optionally followed by ``.0``.
_WHOLE_NUMBER = re.compile(r"\+?([0-9]{1,18})(?:\.0*)?")


@dataclass(frozen=True)
class PatternSummary:
    """Rows read and scored; ``audit`` per booklet when the input carried official notas."""

    rows: int
    scored: int
    audit: tuple[BookletAudit, ...] | None = None

    @property
    def failed(self) -> int:
        return self.rows - self.scored

    def nota_lines(self) -> list[str]:
        """Official notas reproduced, overall and the booklets under the floor; [] without."""
        if self.audit is None:
            return []
        checked = sum(a.nota_checked for a in self.audit)
        matched = sum(a.nota_matched for a in self.audit)
        if not checked:
            return ["no official nota to compare with in the scored rows"]
        overall = (f"official nota reproduced: {matched:,} of {checked:,} "
                   f"({100.0 * matched / checked:.2f}%)")
        return [overall] + [line[2:] for line in unreproduced_lines(self.audit)]


def check_output(path: str | os.PathLike) -> Path:
    """``path`` as the file to write, or UnusableFileError when it cannot be (no such folder,
    or a folder itself): checked before any scoring."""
    path = Path(path)
    if path.is_dir():
        raise UnusableFileError(f"{path} is a folder; name the file to write")
    if not path.parent.is_dir():
        raise UnusableFileError(f"cannot write {path}: there is no folder {path.parent}")
    return path


def detect_encoding(path: Path) -> str:
    """"utf-8" when every byte of ``path`` decodes as UTF-8, else "latin-1"."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with open(path, "rb") as handle:
        try:
            while chunk := handle.read(1 << 20):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return "latin-1"
    return "utf-8"


def read_patterns(path: Path, encoding: str = "auto") -> pd.DataFrame:
    """Read a patterns CSV, every column as text with its name upper-cased.

    ``encoding`` is one of ``PATTERN_ENCODINGS``; the delimiter is the header's most frequent
    of ``DELIMITERS``. Raises UnusableFileError, naming the problem, for a missing, empty,
    UTF-16 or malformed file (a line whose fields do not match the header), a file without
    rows, or one without CO_PROVA and TX_RESPOSTAS or RESPONSE_PATTERN.
    """
    path = Path(path)
    if encoding not in PATTERN_ENCODINGS:
        raise ValueError(
            f"encoding must be one of {', '.join(PATTERN_ENCODINGS)}; got {encoding!r}")
    if not path.is_file():
        raise UnusableFileError(f"{path}: no such file")
    with open(path, "rb") as handle:
        first_line = handle.readline()
        rest = handle.read(1 << 16)
    if not (first_line + rest).strip():
        raise UnusableFileError(f"{path}: the file is empty")
    if first_line.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in first_line + rest:
        raise UnusableFileError(f"{path}: the file looks like UTF-16 or binary data; save it as "
                                "UTF-8 or Latin-1 text")
    if encoding == "auto":
        encoding = detect_encoding(path)
    header = first_line.decode("utf-8-sig" if encoding == "utf-8" else encoding, "replace")
    header = header.rstrip("\r\n")
    delimiter = max(DELIMITERS, key=header.count)
    names = [name.strip().upper() or f"COLUMN{i + 1}"
             for i, name in enumerate(next(csv.reader([header], delimiter=delimiter)))]
    doubled = sorted({name for name in names if names.count(name) > 1})
    if doubled:
        raise UnusableFileError(f"{path}: column(s) {', '.join(doubled)} appear more than once")
    if "CO_PROVA" not in names:
        raise UnusableFileError(f"{path}: needs a CO_PROVA column (header: {header[:200]!r})")
    if "TX_RESPOSTAS" not in names and "RESPONSE_PATTERN" not in names:
        raise UnusableFileError(f"{path}: needs a TX_RESPOSTAS or a RESPONSE_PATTERN column")
    long_line = _overlong_line(path)
    if long_line:
        raise UnusableFileError(
            f"{path}: line {long_line:,} is longer than {MAX_LINE_BYTES:,} bytes, the limit of "
            "a line (a patterns row is a few hundred bytes)")
    con = duckdb.connect()
    try:
        frame = con.execute(
            "SELECT * FROM read_csv($path, header=true, delim=$delim, quote='\"', escape='\"', "
            "auto_detect=false, columns=$columns, encoding=$encoding, "
            "max_line_size=$max_line)",
            {"path": str(path), "delim": delimiter, "encoding": encoding,
             "columns": {name: "VARCHAR" for name in names},
             "max_line": _READER_LINE_BYTES},
        ).df()
    except duckdb.Error as error:
        raise UnusableFileError(f"{path}: {_csv_problem(str(error), encoding)}") from None
    finally:
        con.close()
    if frame.empty:
        raise UnusableFileError(f"{path}: no rows to score (only a header)")
    return frame


def _overlong_line(path: Path) -> int | None:
    """The number of the first line longer than MAX_LINE_BYTES (without its line end), or
    None. DuckDB's reader fails on such a line with a message about its
    buffers ("Not implemented: … does not support a full read on this file"), or reads a file
    of one as if it had no rows; scanned here first, in blocks, so memory stays flat."""
    line, run = 1, 0
    with open(path, "rb") as handle:
        while block := handle.read(SCAN_BLOCK_BYTES):
            ends = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
            starts = np.concatenate(([0], ends[:-1] + 1)) if len(ends) else np.empty(0, int)
            lengths = ends - starts
            if len(lengths):
                lengths[0] += run
            long = np.flatnonzero(lengths > MAX_LINE_BYTES)
            if len(long):
                return line + int(long[0])
            line += len(ends)
            run = (len(block) - (int(ends[-1]) + 1) if len(ends) else run + len(block))
            if run > MAX_LINE_BYTES:
                return line
    return None


def _csv_problem(message: str, encoding: str) -> str:
    """DuckDB's CSV error ``message`` as one sentence."""
    line = re.search(r"CSV Error on Line: (\d+)", message)
    fields = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", message)
    if line and fields:
        expected, found = int(fields.group(1)), int(fields.group(2))
        return (f"line {line.group(1)} has {found} field{'s' if found != 1 else ''}, "
                f"the header has {expected}")
    if "unicode" in message.lower():
        where = f" (line {line.group(1)})" if line else ""
        return (f"not {encoding} text{where}; read it as Latin-1 (--patterns-encoding latin-1) "
                "or let the encoding be detected (auto)")
    if "not implemented" in message.lower() or "maximum line size" in message.lower():
        # A record DuckDB's reader cannot hold: a quoted field that never closes, joining
        # lines into one longer than its buffers.
        return (f"a record is longer than {MAX_LINE_BYTES:,} bytes (a quoted field that never "
                "ends?); a patterns row is a few hundred bytes")
    return f"cannot be read as CSV ({message.splitlines()[0]})"


def whole_number(text) -> int | None:
    """The whole number ``text`` writes (``2341``, ``2341.0``), or None for anything else
    (empty, ``2341.5``, ``inf``, ``1e3``, more than 18 digits, non-ASCII digits, …)."""
    if text is None or (not isinstance(text, str) and pd.isna(text)):
        return None
    match = _WHOLE_NUMBER.fullmatch(str(text).strip())
    return int(match.group(1)) if match else None


def booklet_numbers(frame: pd.DataFrame) -> pd.Series:
    """(n,) nullable Int64: each row's CO_PROVA as a whole number, NA where it is not one."""
    return pd.Series([whole_number(v) for v in frame["CO_PROVA"]], index=frame.index,
                     dtype="Int64")


def score_pattern_frame(
    frame: pd.DataFrame,
    items: ItemsTable,
    options: ScoringOptions = DEFAULT_OPTIONS,
    lc_language: int | None = None,
) -> pd.DataFrame:
    """Return ``frame`` with the output columns added; rows that fail carry SCORE_ERROR.

    ``lc_language`` (0 English, 1 Spanish) is used for LC rows without a TP_LINGUA value.
    """
    out = frame.copy()
    for column in OUTPUT_COLUMNS:
        out[column] = np.nan if column != "SCORE_ERROR" else ""
    out["SCORE_ERROR"] = out["SCORE_ERROR"].astype(object)
    out["THETA_AT_BOUND"] = pd.array([pd.NA] * len(out), dtype="Int8")
    estimator = options.estimator()
    bounds = getattr(estimator, "theta_bounds", None)  # ML and MAP; EAP has none
    work = _prepare(frame, items, lc_language, out)
    for form, group in work.groupby("_form_key", sort=False):
        form_obj: BookletForm = items.forms[form]
        responses, blank, ok = _group_responses(group, form_obj, out)
        if not ok.any():
            continue
        result = score_form(responses[ok], form_obj, options, blank=blank[ok], estimator=estimator)
        target = group.index[ok]
        for column, name in (("theta", "THETA"), ("theta_se", "THETA_SE"), ("lz", "LZ"),
                             ("lz_star", "LZ_STAR"), ("ctt", "CTT"), ("nota", "NOTA")):
            out.loc[target, name] = result[column]
        out.loc[target, "THETA_AT_BOUND"] = _at_bound(result["theta"], bounds)
    return out


def _at_bound(theta: np.ndarray, bounds: tuple[float, float] | None) -> np.ndarray:
    """(n,) int8: 1 where θ sits on a bound of the estimator's θ range, else 0."""
    if bounds is None:
        return np.zeros(len(theta), np.int8)
    return theta_at_bound(theta, bounds).astype(np.int8)


def _prepare(frame: pd.DataFrame, items: ItemsTable, lc_language, out: pd.DataFrame
             ) -> pd.DataFrame:
    """Attach each row's form key; rows without a usable form get SCORE_ERROR."""
    work = pd.DataFrame(index=frame.index)
    booklet = booklet_numbers(frame)
    written = (frame["TP_LINGUA"].fillna("").astype(str).str.strip() if "TP_LINGUA" in frame
               else pd.Series("", index=frame.index))
    keys: list[tuple[int, int | None] | None] = []
    languages = []
    for index in frame.index:
        lang = lc_language if written[index] == "" else whole_number(written[index])
        languages.append(lang)
        text = frame.at[index, "CO_PROVA"]
        if pd.isna(booklet[index]):
            shown = "" if pd.isna(text) else str(text).strip()
            out.at[index, "SCORE_ERROR"] = (
                f"CO_PROVA {shown[:24]!r} is not a booklet number (a whole number, e.g. 1234)"
                if shown else "CO_PROVA missing")
            keys.append(None)
            continue
        number = int(booklet[index])
        if lang not in (None, 0, 1) or (lang is None and written[index] != ""):
            if items.is_bilingual(number):
                out.at[index, "SCORE_ERROR"] = (
                    f"TP_LINGUA must be 0 or 1, got {written[index][:24]!r}")
                keys.append(None)
                continue
            lang = None  # a booklet that is the same in both languages does not need it
        try:
            form = items.form(number, lang)
        except KeyError as error:
            out.at[index, "SCORE_ERROR"] = str(error).strip("'\"")
            keys.append(None)
            continue
        keys.append((form.booklet_id, form.language))
    work["_form_key"] = keys
    work["_language"] = pd.Series(languages, index=frame.index, dtype=object)
    for column in ("TX_RESPOSTAS", "RESPONSE_PATTERN"):
        if column in frame:
            work[column] = frame[column].fillna("").astype(str).str.strip()
    return work.dropna(subset=["_form_key"])


def _group_responses(group: pd.DataFrame, form: BookletForm, out: pd.DataFrame):
    """(responses (n, n_items), blank (n,), ok (n,)) for one form's rows, errors recorded."""
    n = len(group)
    responses = np.full((n, form.n_items), np.nan)
    blank = np.zeros(n, bool)
    ok = np.zeros(n, bool)
    letters = group["TX_RESPOSTAS"] if "TX_RESPOSTAS" in group else pd.Series("", index=group.index)
    pattern = (group["RESPONSE_PATTERN"] if "RESPONSE_PATTERN" in group
               else pd.Series("", index=group.index))
    block = form.language_items if form.language is not None else 0
    for row, index in enumerate(group.index):
        text = letters[index]
        if text:
            error = _score_letters(text, form, block, group.at[index, "_language"], row,
                                   responses, blank)
        elif pattern[index]:
            error = _score_pattern(pattern[index], form, row, responses)
        else:
            error = "no TX_RESPOSTAS or RESPONSE_PATTERN value"
        if error:
            out.at[index, "SCORE_ERROR"] = error
        else:
            ok[row] = True
    return responses, blank, ok


def _score_letters(text, form: BookletForm, block, language, row, responses, blank) -> str | None:
    if len(text) == form.n_items + block and block:
        chars = strings_to_chars([text], len(text))
        lang = np.array([int(language)])
        if not unchosen_block_filled(chars, lang, block)[0]:
            return "LC 50-character string whose unchosen language block is not all '9'"
        chars = select_language_block(chars, lang, block)
    elif len(text) == form.n_items:
        chars = strings_to_chars([text], len(text))
    else:
        return f"TX_RESPOSTAS has {len(text)} characters; booklet form has {form.n_items}"
    if invalid_mark_rows(chars)[0]:
        return "TX_RESPOSTAS has characters other than A-E, '.', '*'"
    responses[row] = correctness(chars, form.keys)[0]
    blank[row] = blank_rows(chars)[0]
    return None


def _score_pattern(text, form: BookletForm, row, responses) -> str | None:
    if len(text) != form.n_items:
        return f"RESPONSE_PATTERN has {len(text)} characters; booklet form has {form.n_items}"
    values = patterns_to_responses([text])[0]
    if np.isnan(values).any():
        return "RESPONSE_PATTERN must contain only 0 and 1"
    responses[row] = values
    return None


def score_pattern_file(
    patterns: Path, items: ItemsTable, output: Path, options: ScoringOptions = DEFAULT_OPTIONS,
    lc_language: int | None = None, encoding: str = "auto",
) -> PatternSummary:
    """Score ``patterns`` (read with ``encoding``, see ``read_patterns``) and write the result
    as a comma-separated UTF-8 CSV to ``output``, whose folder is checked first."""
    output = check_output(output)
    frame = read_patterns(patterns, encoding)
    scored = score_pattern_frame(frame, items, options, lc_language)
    scored.to_csv(output, index=False)
    # The audit compares INEP's recipe with the official notas whatever ``options`` write.
    audited = (scored if options == DEFAULT_OPTIONS or official_notas(frame, items) is None
               else score_pattern_frame(frame, items, DEFAULT_OPTIONS, lc_language))
    return PatternSummary(rows=len(scored), scored=int((scored["SCORE_ERROR"] == "").sum()),
                          audit=pattern_audit(audited, items))


def official_notas(frame: pd.DataFrame, items: ItemsTable) -> pd.Series | None:
    """(n,) float official nota of each row (NaN where none), or None when no column has them.

    ``NU_NOTA`` serves every row; otherwise ``NU_NOTA_<area>`` serves the rows whose booklet
    belongs to that area.
    """
    if OFFICIAL_NOTA_COLUMN in frame:
        return pd.to_numeric(frame[OFFICIAL_NOTA_COLUMN], errors="coerce").astype(float)
    per_area = {area: f"{OFFICIAL_NOTA_COLUMN}_{area}" for area in AREAS}
    if not any(column in frame for column in per_area.values()):
        return None
    booklets = booklet_numbers(frame)
    notas = pd.Series(np.nan, index=frame.index)
    for booklet in booklets.dropna().unique():
        column = per_area.get(items.booklet_area(int(booklet)) or "")
        if column in frame:
            rows = (booklets == booklet).fillna(False).to_numpy(bool)
            notas[rows] = pd.to_numeric(frame.loc[rows, column], errors="coerce")
    return notas


def pattern_audit(scored: pd.DataFrame, items: ItemsTable) -> tuple[BookletAudit, ...] | None:
    """Per booklet of the items file: rows, rows scored, official notas checked and reproduced.

    ``scored`` is the output of ``score_pattern_frame`` with INEP's recipe (its ``NOTA`` is
    compared). None when it carries no official nota.
    Every row counts as present: the input names only patterns meant to be scored.
    """
    official = official_notas(scored, items)
    if official is None:
        return None
    booklets = booklet_numbers(scored)
    ok = (scored["SCORE_ERROR"] == "").to_numpy()
    audits = []
    for booklet in sorted(int(b) for b in booklets.dropna().unique()):
        area = items.booklet_area(booklet)
        if area is None:
            continue
        rows = (booklets == booklet).fillna(False).to_numpy(bool)
        audit = BookletAudit(booklet, area, present=int(rows.sum()))
        done = rows & ok
        count_notas(audit, scored["NOTA"].to_numpy(float)[done], official.to_numpy(float)[done])
        audits.append(audit)
    return tuple(audits)
