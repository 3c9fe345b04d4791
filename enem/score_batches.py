"""Score the present candidates of one area, one Arrow batch at a time.

Takes (id, booklet, language, response string) in Arrow batches (the ingest reads them from
the store), turns each booklet form's rows into a 0/1 matrix, scores it with the shared
analytics code, and hands back score rows, rejected rows and the per-form character matrices
the item statistics need.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from enem.items import BookletForm, ItemsTable
from enem.microdata import booklet_reason
from enem.responses import (
    blank_rows,
    correctness,
    invalid_mark_rows,
    select_language_block,
    string_lengths,
    strings_to_chars,
    unchosen_block_filled,
)
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions, inep_nota, score_form

#: Scores within this distance of the official NU_NOTA count as reproduced (one decimal).
NOTA_TOLERANCE = 0.05
#: Booklets whose share of reproduced official notas is below this are flagged: listed by the
#: ingest, shown on the Data page and, on request, left out of the human reference. The one
#: definition of the rule; the SQL in ``store`` takes it as a parameter.
REPRODUCED_SHARE_FLOOR = 0.99
#: At most this many such booklets are listed one per line; the rest are counted.
MAX_LISTED_BOOKLETS = 40


@dataclass
class BookletAudit:
    """Counts (records) of one booklet in one scoring pass.

    ``present``: TP_PRESENCA = 1 records naming the booklet; ``scored``: those scored;
    ``nota_checked``: scored records carrying an official NU_NOTA; ``nota_matched``: those whose
    nota INEP's official recipe reproduces to the decimal (always that recipe, whatever scoring
    settings the year displays: ``enem.scoring.inep_nota``).
    """

    booklet_id: int
    area: str
    present: int = 0
    scored: int = 0
    nota_checked: int = 0
    nota_matched: int = 0

    @property
    def reproduced_share(self) -> float | None:
        """nota_matched / nota_checked in [0, 1]; None when no official nota was checked."""
        return self.nota_matched / self.nota_checked if self.nota_checked else None


def reproduced_share_text(floor: float = REPRODUCED_SHARE_FLOOR) -> str:
    """``floor`` as a percentage for UI and summary text ("99%" for the default).

    Written with ``:g`` so a floor such as 0.995 reads "99.5%" rather than being rounded.
    """
    return f"{100 * floor:g}%"


def booklet_flagged(nota_matched: int, nota_checked: int,
                    floor: float = REPRODUCED_SHARE_FLOOR) -> bool:
    """Whether a booklet is flagged: some official notas checked, under ``floor`` of them matched.

    ``nota_matched`` and ``nota_checked`` are candidate counts (:class:`BookletAudit`). The
    test is ``nota_matched < floor · nota_checked`` in float64, exactly the comparison the
    store's SQL makes (``store.audit_queries.FLAGGED_BOOKLET``), so the ingest's list and
    the pages' flags never disagree at the edge. (For the default floor it also agrees with
    ``nota_matched / nota_checked < floor`` for every count up to 20 million candidates.)
    """
    return nota_checked > 0 and nota_matched < floor * nota_checked


def count_notas(audit: BookletAudit, nota: np.ndarray, official: np.ndarray) -> None:
    """Add scored records to ``audit``: ``nota`` and ``official`` are (n,), NaN = no official."""
    checked = ~np.isnan(official)
    audit.scored += int(nota.shape[0])
    audit.nota_checked += int(checked.sum())
    audit.nota_matched += int((np.abs(nota[checked] - official[checked]) < NOTA_TOLERANCE).sum())


def unreproduced_lines(audits, floor: float = REPRODUCED_SHARE_FLOOR) -> list[str]:
    """Summary lines for the booklets whose official notas are reproduced below ``floor``.

    ``audits`` is an iterable of BookletAudit. Booklets without official notas are skipped.
    Empty list when every checked booklet reaches the floor.
    """
    low = sorted((a for a in audits if booklet_flagged(a.nota_matched, a.nota_checked, floor)),
                 key=lambda a: (a.area, a.booklet_id))
    if not low:
        return []
    share = reproduced_share_text(floor)
    out = [f"  booklets with under {share} of official NU_NOTA reproduced: {len(low)}"]
    for audit in low[:MAX_LISTED_BOOKLETS]:
        out.append(f"    booklet {audit.booklet_id} ({audit.area}): {audit.nota_matched:,} of "
                   f"{audit.nota_checked:,} ({100 * audit.reproduced_share:.1f}%)")
    if len(low) > MAX_LISTED_BOOKLETS:
        out.append(f"    … and {len(low) - MAX_LISTED_BOOKLETS} more")
    return out


#: A booklet form: (booklet id, LC foreign language or None outside LC).
FormKey = tuple[int, int | None]


@dataclass
class AreaAccumulator:
    """What the scoring pass keeps of one area for the item aggregates afterwards.

    Per form: lists of (n, n_items) uint8 character matrices, (n,) θ and (n,) CTT arrays.
    ``audit``: per booklet of the items file that candidates named, their counts.
    """

    chars: dict[FormKey, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    theta: dict[FormKey, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    ctt: dict[FormKey, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    audit: dict[int, BookletAudit] = field(default_factory=dict)
    #: ``ItemsTable.booklet_area`` of the booklets met (a lookup in the items' rows each time).
    areas: dict[int, str | None] = field(default_factory=dict)

    def booklet_area(self, items: ItemsTable, booklet_id: int) -> str | None:
        """``items.booklet_area(booklet_id)``, looked up once per booklet."""
        if booklet_id not in self.areas:
            self.areas[booklet_id] = items.booklet_area(booklet_id)
        return self.areas[booklet_id]

    @property
    def nota_checked(self) -> int:
        """Scored records of the area carrying an official nota."""
        return sum(a.nota_checked for a in self.audit.values())

    @property
    def nota_matched(self) -> int:
        """Scored records of the area whose official nota was reproduced."""
        return sum(a.nota_matched for a in self.audit.values())

    def booklet(self, booklet_id: int, area: str) -> BookletAudit:
        """The audit counts of one booklet, created on first use."""
        if booklet_id not in self.audit:
            self.audit[booklet_id] = BookletAudit(booklet_id, area)
        return self.audit[booklet_id]


@dataclass
class BatchResult:
    """Rows produced from one Arrow batch: score columns and rejected (id, reason) pairs;
    ``records``: the batch's rows; ``rows``: the batch row each score row comes from."""

    scores: pa.Table | None
    rejected_ids: list[str]
    rejected_reasons: list[str]
    records: int = 0
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


SCORE_SCHEMA = pa.schema([
    ("year", pa.int32()), ("examinee_id", pa.string()), ("area", pa.string()),
    ("booklet_id", pa.int32()), ("item_language", pa.int16()),
    ("theta", pa.float64()), ("theta_se", pa.float64()), ("lz", pa.float64()),
    ("lz_star", pa.float64()), ("ctt", pa.int16()), ("n_scored", pa.int16()),
    ("nota", pa.float64()), ("blank", pa.bool_()),
    ("state", pa.string()), ("school_type", pa.int16()),
])


def score_batch(
    batch: pa.RecordBatch,
    year: int,
    area: str,
    items: ItemsTable,
    accumulator: AreaAccumulator,
    options: ScoringOptions = DEFAULT_OPTIONS,
) -> BatchResult:
    """Score one batch with columns examinee_id, booklet_id, language, responses, nota_official,
    state and school_type."""
    ids = batch.column("examinee_id")
    booklets = batch.column("booklet_id").to_numpy(zero_copy_only=False)
    booklets = np.where(np.isnan(booklets.astype(float)), -1, booklets).astype(np.int64)
    languages = batch.column("language").to_numpy(zero_copy_only=False).astype(float)
    languages = np.where(np.isnan(languages), -1, languages).astype(np.int64)
    strings = batch.column("responses")
    lengths = string_lengths(strings)
    official = batch.column("nota_official").to_numpy(zero_copy_only=False).astype(float)

    rejected_ids: list[str] = []
    rejected_reasons: list[str] = []
    tables: list[pa.Table] = []
    sources: list[np.ndarray] = []

    def reject(rows: np.ndarray, reason: str) -> None:
        if rows.size:
            rejected_ids.extend(ids.take(pa.array(rows)).to_pylist())
            rejected_reasons.extend([reason] * rows.size)

    for booklet_id in np.unique(booklets):
        rows = np.flatnonzero(booklets == booklet_id)
        if booklet_id < 0:
            reject(rows, booklet_reason(area))
            continue
        booklet_area = accumulator.booklet_area(items, int(booklet_id))
        if booklet_area is not None and booklet_area != area:
            reject(rows, f"booklet {booklet_id} is a {booklet_area} booklet, not {area}")
            continue
        audit = None
        if booklet_area is not None or int(booklet_id) in items.invalid:
            # Booklets of the items file only: unknown codes are counted in the rejects.
            audit = accumulator.booklet(int(booklet_id), area)
            audit.present += int(rows.size)
        groups = _form_groups(rows, int(booklet_id), languages, items, reject)
        for form, form_rows in groups:
            chars, kept = _form_chars(form, form_rows, strings, lengths, languages, reject)
            if kept.size == 0:
                continue
            bad = invalid_mark_rows(chars)
            if bad.any():
                reject(kept[bad], "response string has characters other than A-E, '.', '*'")
                chars, kept = chars[~bad], kept[~bad]
            if kept.size == 0:
                continue
            blank = blank_rows(chars)
            responses = correctness(chars, form.keys)
            result = score_form(responses, form, options, blank=blank)
            key = (form.booklet_id, form.language)
            accumulator.chars[key].append(chars)
            accumulator.theta[key].append(result["theta"])
            accumulator.ctt[key].append(np.asarray(result["ctt"], dtype=np.float64))
            # A booklet with forms is in the items file, so it has an audit (one without is
            # rejected whole by _form_groups).
            assert audit is not None
            count_notas(audit, _audited_nota(responses, form, result, options, blank,
                                             official[kept]), official[kept])
            tables.append(_score_table(year, area, form, batch.select(_COPIED).take(kept),
                                       result, blank))
            sources.append(kept)
    if not tables:
        return BatchResult(None, rejected_ids, rejected_reasons, batch.num_rows)
    return BatchResult(pa.concat_tables(tables), rejected_ids, rejected_reasons, batch.num_rows,
                       np.concatenate(sources))


def _audited_nota(responses: np.ndarray, form: BookletForm, result: dict, options: ScoringOptions,
                  blank: np.ndarray, official: np.ndarray) -> np.ndarray:
    """(n,) the notas the audit compares with ``official``: INEP's recipe whatever ``options``
    display (``enem.scoring.inep_nota``); the scored notas themselves when no row has an
    official nota to compare (nothing is checked then, so nothing is estimated again)."""
    if np.isnan(official).all():
        return np.asarray(result["nota"], dtype=float)
    return np.asarray(inep_nota(responses, form, result["theta"], options, blank), dtype=float)


def _form_groups(rows, booklet_id, languages, items: ItemsTable, reject):
    """Split one booklet's rows by form; reject rows whose booklet or language is unusable."""
    if booklet_id in items.invalid:
        reject(rows, f"booklet {booklet_id} cannot be scored: {items.invalid[booklet_id]}")
        return []
    if not items.is_bilingual(booklet_id):
        try:
            return [(items.form(booklet_id, None), rows)]
        except KeyError:
            reject(rows, f"unknown booklet {booklet_id} (not in the items file)")
            return []
    groups = []
    for language in (0, 1):
        chosen = rows[languages[rows] == language]
        if chosen.size:
            groups.append((items.form(booklet_id, language), chosen))
    reject(rows[~np.isin(languages[rows], (0, 1))],
           "TP_LINGUA missing or not 0/1 for an LC booklet")
    return groups


def _form_chars(form: BookletForm, rows, strings, lengths, languages, reject):
    """Character matrix (in form order) of the rows whose string fits the form."""
    n_items = form.n_items
    row_lengths = lengths[rows]
    direct = rows[row_lengths == n_items]
    parts, kept = [], []
    if direct.size:
        parts.append(strings_to_chars(strings.take(pa.array(direct)), n_items))
        kept.append(direct)
    block = _language_block_size(form)
    if block:
        wide = rows[row_lengths == n_items + block]
        if wide.size:
            raw = strings_to_chars(strings.take(pa.array(wide)), n_items + block)
            filled = unchosen_block_filled(raw, languages[wide], block)
            reject(wide[~filled],
                   "LC 50-character string whose unchosen language block is not all '9'")
            parts.append(select_language_block(raw[filled], languages[wide][filled], block))
            kept.append(wide[filled])
    expected = f"{n_items}" + (f" or {n_items + block}" if block else "")
    wrong = rows[~np.isin(row_lengths, [n_items, n_items + block] if block else [n_items])]
    missing = wrong[lengths[wrong] <= 0]
    reject(missing, "present (TP_PRESENCA = 1) but no response string")
    reject(np.setdiff1d(wrong, missing), f"response string length is not {expected}")
    if not kept:
        return np.zeros((0, n_items), np.uint8), np.zeros(0, np.int64)
    return np.concatenate(parts), np.concatenate(kept)


def _language_block_size(form: BookletForm) -> int:
    """Items of the foreign-language block in an LC form (0 outside LC)."""
    return 0 if form.language is None else int(form.language_items)


#: Record columns copied into the score rows.
_COPIED = ["examinee_id", "state", "school_type"]


def _score_table(year, area, form: BookletForm, rows: pa.RecordBatch, result, blank) -> pa.Table:
    n = rows.num_rows
    columns = {
        "year": pa.array(np.full(n, year, np.int32)),
        "examinee_id": rows.column("examinee_id").cast(pa.string()),
        "area": pa.repeat(pa.scalar(area, pa.string()), n),
        "booklet_id": pa.array(np.full(n, form.booklet_id, np.int32)),
        "item_language": pa.repeat(pa.scalar(form.language, pa.int16()), n),
        "theta": pa.array(result["theta"]),
        "theta_se": pa.array(result["theta_se"]),
        "lz": pa.array(result["lz"]),
        "lz_star": pa.array(result["lz_star"]),
        "ctt": pa.array(np.asarray(result["ctt"]).astype(np.int16)),
        "n_scored": pa.array(np.asarray(result["n_scored"]).astype(np.int16)),
        "nota": pa.array(result["nota"]),
        "blank": pa.array(blank),
        "state": rows.column("state").cast(pa.string()),
        "school_type": rows.column("school_type").cast(pa.int16()),
    }
    return pa.Table.from_pydict(columns, schema=SCORE_SCHEMA)
