"""``score-patterns``: score a CSV of response patterns against an ITENS_PROVA file.

Each input row names its booklet (``CO_PROVA``) and carries either ``TX_RESPOSTAS`` (letters, as
in the microdata; ``TP_LINGUA`` for LC) or ``RESPONSE_PATTERN`` (0/1 in booklet order, abandoned
items included). The output is the same rows with THETA, THETA_SE, LZ, LZ_STAR, CTT, NOTA and
SCORE_ERROR (why a row could not be scored; empty otherwise) appended.

When the input also carries the official nota (``NU_NOTA``, or ``NU_NOTA_<area>`` as in a
microdata extract, the area being that of the row's booklet), the summary counts per booklet how
many official notas the scoring reproduced, as the ingest does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from enem.areas import AREAS
from enem.csvfiles import UnusableFileError
from enem.items import BookletForm, ItemsTable
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

OUTPUT_COLUMNS = ("THETA", "THETA_SE", "LZ", "LZ_STAR", "CTT", "NOTA", "SCORE_ERROR")
#: Input column with the official nota of every row, whatever its area.
OFFICIAL_NOTA_COLUMN = "NU_NOTA"


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


def read_patterns(path: Path) -> pd.DataFrame:
    """Read a patterns CSV (delimiter sniffed, every column as text, UTF-8 or Latin-1)."""
    path = Path(path)
    if not path.is_file():
        raise UnusableFileError(f"{path}: no such file")
    con = duckdb.connect()
    try:
        frame = con.execute(
            "SELECT * FROM read_csv($path, all_varchar=true, header=true)", {"path": str(path)}
        ).df()
    except duckdb.Error as error:
        raise UnusableFileError(f"{path}: cannot be read as CSV ({error})") from error
    finally:
        con.close()
    frame.columns = [str(c).strip().upper() for c in frame.columns]
    if "CO_PROVA" not in frame:
        raise UnusableFileError(f"{path}: needs a CO_PROVA column")
    if "TX_RESPOSTAS" not in frame and "RESPONSE_PATTERN" not in frame:
        raise UnusableFileError(f"{path}: needs a TX_RESPOSTAS or a RESPONSE_PATTERN column")
    return frame


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
    estimator = options.estimator()
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
    return out


def _prepare(frame: pd.DataFrame, items: ItemsTable, lc_language, out: pd.DataFrame) -> pd.DataFrame:
    """Attach each row's form key; rows without a usable form get SCORE_ERROR."""
    work = pd.DataFrame(index=frame.index)
    booklet = pd.to_numeric(frame["CO_PROVA"], errors="coerce")
    language = (pd.to_numeric(frame["TP_LINGUA"], errors="coerce") if "TP_LINGUA" in frame
                else pd.Series(np.nan, index=frame.index))
    if lc_language is not None:
        language = language.fillna(lc_language)
    keys = []
    for index in frame.index:
        if pd.isna(booklet[index]):
            out.at[index, "SCORE_ERROR"] = "CO_PROVA missing or not a number"
            keys.append(None)
            continue
        lang = None if pd.isna(language[index]) else int(language[index])
        try:
            form = items.form(int(booklet[index]), lang)
        except KeyError as error:
            out.at[index, "SCORE_ERROR"] = str(error).strip("'\"")
            keys.append(None)
            continue
        keys.append((form.booklet_id, form.language))
    work["_form_key"] = keys
    work["_language"] = language
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
    lc_language: int | None = None,
) -> PatternSummary:
    """Score ``patterns`` and write the result CSV (same delimiter as a comma CSV, UTF-8)."""
    frame = read_patterns(patterns)
    scored = score_pattern_frame(frame, items, options, lc_language)
    scored.to_csv(output, index=False)
    return PatternSummary(rows=len(scored), scored=int((scored["SCORE_ERROR"] == "").sum()),
                          audit=pattern_audit(scored, items))


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
    booklets = pd.to_numeric(frame["CO_PROVA"], errors="coerce")
    notas = pd.Series(np.nan, index=frame.index)
    for booklet in booklets.dropna().unique():
        column = per_area.get(items.booklet_area(int(booklet)) or "")
        if column in frame:
            rows = booklets == booklet
            notas[rows] = pd.to_numeric(frame.loc[rows, column], errors="coerce")
    return notas


def pattern_audit(scored: pd.DataFrame, items: ItemsTable) -> tuple[BookletAudit, ...] | None:
    """Per booklet of the items file: rows, rows scored, official notas checked and reproduced.

    ``scored`` is the output of ``score_pattern_frame``. None when it carries no official nota.
    Every row counts as present: the input names only patterns meant to be scored.
    """
    official = official_notas(scored, items)
    if official is None:
        return None
    booklets = pd.to_numeric(scored["CO_PROVA"], errors="coerce")
    ok = (scored["SCORE_ERROR"] == "").to_numpy()
    audits = []
    for booklet in sorted(int(b) for b in booklets.dropna().unique()):
        area = items.booklet_area(booklet)
        if area is None:
            continue
        rows = (booklets == booklet).to_numpy()
        audit = BookletAudit(booklet, area, present=int(rows.sum()))
        done = rows & ok
        count_notas(audit, scored["NOTA"].to_numpy(float)[done], official.to_numpy(float)[done])
        audits.append(audit)
    return tuple(audits)
