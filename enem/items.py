"""ITENS_PROVA: item parameters per booklet, turned into scoreable booklet forms.

A *form* is what one candidate answered: the items of one booklet (and, in LC, of one foreign
language) sorted by ``CO_POSICAO``. Character *k* of a response string is item *k* of its form.

Real files vary by year, and each variant is read here rather than refused:

* 2009 lacks ``TP_LINGUA`` and ``IN_ITEM_ADAPTADO``, 2010–2012 lack ``IN_ITEM_ADAPTADO``;
* copies that went through spreadsheet tools write whole numbers as ``60181.0``;
* an abandoned item may have no ``CO_ITEM`` (2009 LC) and still holds its position;
* 2020's digital LC booklets carry ``TP_VERSAO_DIGITAL``: two complete 45-item versions under
  one ``CO_PROVA``, version *L* for candidates of ``TP_LINGUA`` *L*;
* 2013's adapted booklets list every position twice with nothing telling the two apart.

A booklet whose form lacks a position that the area's other forms hold (an item row lost from
the file) is not scored, and its problem names the missing CO_POSICAO, e.g. ``44 items, not 45
(CO_POSICAO 136–180 without 152)``; so is a form spanning ITEMS_PER_AREA positions with holes.
So is a booklet with an item whose parameters lie outside their possible range
(:data:`PARAMETER_RANGES`: a = −3.5 or inf, c = 1). A file whose last line has no line end is
refused whole (:func:`refuse_cut_short`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.irt import ItemBank
from enem.areas import AREAS, ITEMS_PER_AREA, OPTION_LETTERS
from enem.csvfiles import UnusableFileError, check_readable, read_small_csv

REQUIRED_ITEM_COLUMNS: tuple[str, ...] = (
    "CO_POSICAO", "SG_AREA", "CO_ITEM", "TX_GABARITO",
    "NU_PARAM_A", "NU_PARAM_B", "NU_PARAM_C", "CO_PROVA",
)
ANNULLED_KEY = "X"
#: booklets.note of a booklet whose every position is listed twice (2013's 187–190).
DOUBLE_LISTING_NOTE = ("every position listed twice (two item collections, nothing says which "
                       "one a candidate answered); the first-listed collection is scored")
#: Codes allowed in TP_LINGUA and TP_VERSAO_DIGITAL (0 English, 1 Spanish).
LANGUAGE_CODES = (0, 1)
#: Largest value of the store's INTEGER columns (CO_PROVA, CO_POSICAO, CO_HABILIDADE) …
INTEGER_MAX = 2**31 - 1
#: … and of CO_ITEM (BIGINT), kept where a float still holds every whole number exactly.
ITEM_ID_MAX = 2**53
#: Multiplier of the booklet in the stand-in id of an item without CO_ITEM (positions < 1000).
_MISSING_ID_BOOKLET_FACTOR = 1000
#: The values a scored item's 3PL parameter can take, as (lowest, whether the lowest itself is
#: allowed, the bound it stays under; always excluded), with the words an error shows. A
#: discrimination a ≤ 0 would make a right answer lower θ (or say nothing), an infinite one
#: drops the item out of every likelihood unseen, and a guessing probability c must be a
#: probability below 1 (``ItemBank``'s rule): such a file is broken, and its booklet is not
#: scored rather than scored into nonsense (a file with a = −3.5 or inf everywhere once gave
#: every candidate θ ≈ 0).
PARAMETER_RANGES: dict[str, tuple[float, bool, float, str]] = {
    "a": (0.0, False, float("inf"), "a finite number above 0"),
    "b": (-float("inf"), False, float("inf"), "a finite number"),
    "c": (0.0, True, 1.0, "from 0 up to, not including, 1"),
}


def missing_item_id(booklet_id: int, co_posicao: int) -> int:
    """Stand-in for the CO_ITEM of an item the file lists without one (only abandoned items).

    Negative, so it never meets a real CO_ITEM, and unique per (booklet, CO_POSICAO), so such
    items of different booklets are never pooled as if they were one item. The ``items`` table
    keeps NULL; forms rebuilt from it get the same stand-in.
    """
    return -(int(booklet_id) * _MISSING_ID_BOOKLET_FACTOR + int(co_posicao))


#: The constant D of INEP's published parameters (INEP scores with D = 1): the default of
#: ``enem.scoring.ScoringOptions.scaling``, and the D a form's ``bank`` carries until the
#: settings that score the form set theirs (``ScoringOptions.item_bank``).
PUBLISHED_SCALING = 1.0


def stored_item_bank(items, *, scaling: float) -> ItemBank:
    """The 3PL bank of a set of stored items, with the constant D they are scored with.

    The one way every layer turns item rows (``items`` table, ITENS_PROVA, a demo bank) into a
    bank, so that curves, standard errors and simulated θ of one year all use one D.

    Parameters
    ----------
    items : DataFrame or mapping with columns "a", "b", "c", each of shape (n_items,)
        3PL parameters; NaN marks an item without parameters (``ItemBank.usable`` False).
    scaling : float
        D: ``ScoringOptions.scaling`` of the year or run whose θ the bank serves (1.0 for INEP's
        recipe). Keyword-only and without a default, so no caller drops it by accident.

    Returns
    -------
    ItemBank of ``n_items`` items, in the rows' order.
    """
    return ItemBank.from_arrays(items["a"], items["b"], items["c"], scaling=scaling)


@dataclass(frozen=True)
class BookletForm:
    """The items one candidate of a booklet (and LC language) answered, in string order.

    Arrays have shape (n_items,). ``item_ids`` holds CO_ITEM, or ``missing_item_id`` for an
    abandoned item listed without one. ``keys`` holds ASCII codes of the answer letters; ``bank``
    has NaN parameters for abandoned or annulled items, so they drop out of every likelihood,
    and D = :data:`PUBLISHED_SCALING` (scoring gives it the settings' D).
    ``language_items`` counts the foreign-language items, which come first.
    """

    booklet_id: int
    area: str
    language: int | None
    colour: str
    item_ids: np.ndarray
    positions: np.ndarray
    keys: np.ndarray
    bank: ItemBank
    language_items: int = 0

    @property
    def n_items(self) -> int:
        return int(self.item_ids.shape[0])


@dataclass
class ItemsTable:
    """A parsed ITENS_PROVA file.

    ``rows`` is one typed row per file row, with ``position`` (1-based place in its form's
    string; NA for a row no form uses, e.g. the second listing of a doubled booklet) and
    ``version`` (TP_VERSAO_DIGITAL). ``forms`` maps (booklet_id, language) to a BookletForm,
    language None outside LC; ``invalid`` maps booklet ids that cannot be scored to the reason;
    ``notes`` holds remarks on valid booklets (how an irregular listing was resolved).
    """

    rows: pd.DataFrame
    forms: dict[tuple[int, int | None], BookletForm]
    invalid: dict[int, str] = field(default_factory=dict)
    notes: dict[int, str] = field(default_factory=dict)

    def form(self, booklet_id: int, language: int | None) -> BookletForm:
        """The form for a booklet and candidate language (ignored outside LC).

        Raises KeyError with a readable message for an unknown or unusable booklet.
        """
        if booklet_id in self.invalid:
            raise KeyError(f"booklet {booklet_id} cannot be scored: {self.invalid[booklet_id]}")
        if (booklet_id, None) in self.forms:
            return self.forms[(booklet_id, None)]
        if (booklet_id, language) in self.forms:
            return self.forms[(booklet_id, language)]
        if any(key[0] == booklet_id for key in self.forms):
            raise KeyError(f"booklet {booklet_id} needs TP_LINGUA 0 or 1, got {language!r}")
        raise KeyError(f"unknown booklet {booklet_id}")

    def is_bilingual(self, booklet_id: int) -> bool:
        """True for LC booklets whose first items depend on the candidate's language."""
        return (booklet_id, 0) in self.forms or (booklet_id, 1) in self.forms

    def booklet_area(self, booklet_id: int) -> str | None:
        """The area of a booklet in the file; None when unknown or its rows name several."""
        areas = self.rows.loc[self.rows["booklet_id"] == booklet_id, "area"].dropna().unique()
        return str(areas[0]) if len(areas) == 1 else None

    def booklets(self) -> pd.DataFrame:
        """One row per booklet: booklet_id, area, colour, n_items, n_abandoned, valid, problem,
        note.

        ``n_abandoned`` counts the distinct abandoned items that some form of the booklet holds
        (an item in both 2020 digital versions counts once).
        """
        rows = self.rows
        summary = rows.groupby("booklet_id").agg(
            area=("area", "first"),
            colour=("colour", "first"),
            n_items=("position", lambda p: int(p.max()) if p.notna().any() else 0),
        ).reset_index()
        summary["n_abandoned"] = summary["booklet_id"].map(_abandoned_counts(rows)).fillna(0)
        summary["n_abandoned"] = summary["n_abandoned"].astype(int)
        summary["valid"] = ~summary["booklet_id"].isin(list(self.invalid))
        summary["problem"] = summary["booklet_id"].map(self.invalid)
        summary["note"] = summary["booklet_id"].map(self.notes)
        return summary


def _abandoned_counts(rows: pd.DataFrame) -> pd.Series:
    """Distinct abandoned items per booklet among rows a form uses (booklet_id → count)."""
    used = rows[rows["abandoned"] & rows["position"].notna()]
    # An item without CO_ITEM is told apart by its position.
    ident = used["item_id"].astype("Float64").fillna(-used["co_posicao"].astype("Float64"))
    return pd.DataFrame({"booklet_id": used["booklet_id"], "ident": ident}) \
        .drop_duplicates().groupby("booklet_id").size()


def load_items(path: Path, encoding: str = "latin-1") -> ItemsTable:
    """Read and validate an ITENS_PROVA file. Raises UnusableFileError if it cannot be used."""
    check_readable(Path(path), REQUIRED_ITEM_COLUMNS, encoding)
    refuse_cut_short(Path(path))
    return parse_items(read_small_csv(Path(path), encoding))


def refuse_cut_short(path: Path) -> None:
    """UnusableFileError when the file's last line has no line end.

    INEP ends every line of its item files with one. A file without it was most likely cut
    during a download or copy, and a cut can fall anywhere in a row: inside CO_PROVA (the row
    then joins another booklet), inside a parameter (``2.64336`` read as ``2.6``), or after
    the last ``;`` (a field silently empty). None of that can be told from a complete row, so
    the whole file is refused; the file is small, so counting its lines costs nothing.
    """
    data = path.read_bytes()
    if not data or data.endswith((b"\n", b"\r")):
        return
    line = data.count(b"\n") + 1
    raise UnusableFileError(
        f"{path}: the last line (line {line:,}) has no line end, so the file looks cut short "
        "(INEP's item files end every line with one); fetch it again, or add a line end if "
        "it is complete")


def parse_items(raw: pd.DataFrame) -> ItemsTable:
    """Type and validate raw ITENS_PROVA text columns and build every booklet form."""
    rows = _typed_rows(raw)
    invalid = _find_invalid_booklets(rows)
    rows["position"] = pd.NA
    forms: dict[tuple[int, int | None], BookletForm] = {}
    notes: dict[int, str] = {}
    for booklet_id, booklet_rows in rows.groupby("booklet_id", sort=True):
        if booklet_id in invalid:
            continue
        for language, form_rows in _form_row_sets(booklet_rows):
            ordered, doubled = _ordered_form(form_rows)
            if doubled:
                notes[int(booklet_id)] = DOUBLE_LISTING_NOTE
            rows.loc[ordered.index, "position"] = np.arange(1, len(ordered) + 1)
            forms[(int(booklet_id), language)] = build_form(int(booklet_id), language, ordered)
    rows["position"] = rows["position"].astype("Int16")
    return ItemsTable(rows=rows, forms=forms, invalid=invalid, notes=notes)


def parameter_in_range(name: str, values: pd.Series) -> pd.Series:
    """Bool mask, (n,) like ``values`` (parsed floats): True where a value of 3PL parameter
    ``name`` ("a", "b" or "c") lies in its :data:`PARAMETER_RANGES` (NaN is never in range)."""
    lowest, lowest_allowed, above, _ = PARAMETER_RANGES[name]
    above_lowest = values >= lowest if lowest_allowed else values > lowest
    return above_lowest & (values < above)


def _whole_numbers(values: pd.Series, limit: int = INTEGER_MAX) -> tuple[pd.Series, pd.Series]:
    """Parse text holding whole numbers, also when written as floats (``60181.0``).

    ``values`` is (n,) text or None. Returns (Int64 values, NA where empty or unusable;
    bool ``bad``: a value was given but is not a number, not integral, e.g. ``60181.5``, or
    beyond ±``limit``, the largest value its store column holds: a booklet id of 3,000,000,000
    would stop the ingest at its INSERT, and 1e20 cannot even be an Int64).
    """
    given = values.notna() & (values != "")
    parsed = pd.to_numeric(values.where(given, None), errors="coerce").astype(float)
    integral = (parsed.notna() & np.isfinite(parsed) & (parsed == np.floor(parsed))
                & (parsed.abs() <= limit))
    bad = given & ~integral
    return parsed.where(integral).astype("Int64"), bad


def _typed_rows(raw: pd.DataFrame) -> pd.DataFrame:
    """One typed row per file row, ``problem`` naming what makes it unusable (else None)."""
    raw = raw.rename(columns=str.upper)

    def text(column: str) -> pd.Series:
        if column not in raw:
            return pd.Series([None] * len(raw), index=raw.index, dtype=object)
        return raw[column].astype(object).where(raw[column].notna(), None).map(
            lambda v: v.strip() if isinstance(v, str) else v
        )

    def number(column: str) -> tuple[pd.Series, pd.Series]:
        values = text(column)
        parsed = pd.to_numeric(values, errors="coerce")
        bad = values.notna() & (values != "") & parsed.isna()
        return parsed.astype(float), bad

    problems = pd.Series("", index=raw.index)

    def flag(mask: pd.Series, message: pd.Series | str) -> None:
        nonlocal problems
        problems = problems.where(~mask, problems + message + "; ")

    def whole(column: str, required: bool = False, limit: int = INTEGER_MAX) -> pd.Series:
        """Whole-number column; a non-integral or out-of-range value (or a missing required
        one) is flagged."""
        values = text(column)
        parsed, bad = _whole_numbers(values, limit)
        flag(bad, f"{column} " + values.astype(str).str.slice(0, 24)
             + f" is not a whole number (at most {limit:,})")
        if required:
            flag(parsed.isna() & ~bad, f"missing {column}")
        return parsed

    rows = pd.DataFrame(index=raw.index)
    rows["booklet_id"] = whole("CO_PROVA", required=True)
    rows["area"] = text("SG_AREA").map(lambda v: v.upper() if isinstance(v, str) else v)
    rows["co_posicao"] = whole("CO_POSICAO", required=True)
    rows["item_id"] = whole("CO_ITEM", limit=ITEM_ID_MAX)
    rows["key"] = text("TX_GABARITO").map(lambda v: v.upper() if isinstance(v, str) else v)
    # Descriptive columns: an odd value is dropped, it does not stop scoring.
    rows["skill"] = _whole_numbers(text("CO_HABILIDADE"))[0]
    rows["colour"] = text("TX_COR")
    rows["item_language"] = _language_code(whole("TP_LINGUA"), "TP_LINGUA", flag)
    rows["version"] = _language_code(whole("TP_VERSAO_DIGITAL"), "TP_VERSAO_DIGITAL", flag)
    rows["adapted"] = _whole_numbers(text("IN_ITEM_ADAPTADO"))[0].fillna(0).astype(bool)
    flagged = whole("IN_ITEM_ABAN").fillna(0) == 1
    rows["abandon_reason"] = text("TX_MOTIVO_ABAN")
    params = {}
    for name in ("a", "b", "c"):
        parsed, bad = number(f"NU_PARAM_{name.upper()}")
        params[name] = parsed
        flag(bad, f"non-numeric NU_PARAM_{name.upper()}")
    present = pd.concat([params[n].notna() for n in "abc"], axis=1)
    flag(present.any(axis=1) & ~present.all(axis=1), "only some of the three parameters given")
    annulled = rows["key"].eq(ANNULLED_KEY).fillna(False)
    rows["abandoned"] = (flagged | ~present.all(axis=1) | annulled).astype(bool)
    for name in "abc":
        rows[name] = params[name].where(~rows["abandoned"])
        # Only the parameters that score are checked: an abandoned or annulled item's are unused.
        column = f"NU_PARAM_{name.upper()}"
        outside = rows[name].notna() & ~parameter_in_range(name, rows[name])
        flag(outside, f"{column} " + text(column).astype(str).str.slice(0, 24)
             + f" is outside its possible range ({PARAMETER_RANGES[name][3]})")
    flag(~rows["key"].isin(list(OPTION_LETTERS)) & ~annulled, "answer key not in A-E/X")
    # An abandoned item drops out of the likelihood, so it needs no CO_ITEM (2009 LC lists some
    # without one); a scored item does, to be told apart from the others.
    co_item = text("CO_ITEM")
    flag((co_item.isna() | co_item.eq("")) & ~rows["abandoned"],
         "missing CO_ITEM on an item that is not abandoned")
    flag(~rows["area"].isin(AREAS), "unknown SG_AREA")
    rows["problem"] = problems.str.rstrip("; ").replace("", None)
    return rows


def _language_code(values: pd.Series, column: str, flag) -> pd.Series:
    """TP_LINGUA / TP_VERSAO_DIGITAL as Int16: empty, 0 or 1; other values are flagged."""
    flag(values.notna() & ~values.isin(LANGUAGE_CODES), f"{column} is not empty, 0 or 1")
    return values.where(values.isin(LANGUAGE_CODES)).astype("Int16")


def _find_invalid_booklets(rows: pd.DataFrame) -> dict[int, str]:
    """booklet_id → why it cannot be scored: a bad row, mixed areas or an unusable listing."""
    invalid: dict[int, str] = {}
    for _, row in rows[rows["problem"].notna()].iterrows():
        if pd.isna(row["booklet_id"]):
            continue
        booklet = int(row["booklet_id"])
        invalid.setdefault(
            booklet, f"item {row['item_id']} at CO_POSICAO {row['co_posicao']}: {row['problem']}")
    for booklet_id, booklet_rows in rows.dropna(subset=["booklet_id"]).groupby("booklet_id"):
        booklet = int(booklet_id)
        if booklet in invalid:
            continue
        if booklet_rows["area"].nunique() != 1:
            invalid[booklet] = "items from more than one area"
            continue
        problem = _version_problem(booklet_rows)
        if problem:
            invalid[booklet] = problem
            continue
        for language, form_rows in _form_row_sets(booklet_rows):
            if _listing_multiplicity(form_rows) == 0:
                label = "" if language is None else f" (TP_LINGUA {language})"
                invalid[booklet] = f"repeated CO_POSICAO{label}"
                break
    invalid.update(_incomplete_forms(rows, invalid))
    return invalid


def _incomplete_forms(rows: pd.DataFrame, invalid: dict[int, str]) -> dict[int, str]:
    """booklet_id → the positions one of its forms lacks, for booklets not already invalid.

    A form lacks positions when its set of CO_POSICAO is a proper subset of its area's usual
    set (the set most forms of the area hold; the larger on a tie), or, failing that, when it
    spans ITEMS_PER_AREA positions with some missing.
    """
    forms: list[tuple[int, str, int | None, frozenset[int]]] = []
    for booklet_id, booklet_rows in rows.dropna(subset=["booklet_id"]).groupby("booklet_id"):
        if int(booklet_id) in invalid:
            continue
        for language, form_rows in _form_row_sets(booklet_rows):
            positions = frozenset(int(p) for p in form_rows["co_posicao"].dropna())
            forms.append((int(booklet_id), str(booklet_rows["area"].iloc[0]), language,
                          positions))
    usual: dict[str, frozenset[int]] = {}
    for area in {area for _, area, _, _ in forms}:
        counts: dict[frozenset[int], int] = {}
        for _, form_area, _, positions in forms:
            if form_area == area:
                counts[positions] = counts.get(positions, 0) + 1
        usual[area] = max(counts, key=lambda s: (counts[s], len(s)))
    found: dict[int, str] = {}
    for booklet, area, language, positions in forms:
        if booklet in found or not positions:
            continue
        expected = usual[area]
        if not positions < expected:
            low, high = min(positions), max(positions)
            if high - low + 1 != ITEMS_PER_AREA:
                continue
            expected = frozenset(range(low, high + 1))
        missing = sorted(expected - positions)
        if missing:
            shown = ", ".join(str(p) for p in missing[:10]) + (", …" if len(missing) > 10 else "")
            label = "" if language is None else f" for TP_LINGUA {language}"
            found[booklet] = (f"{len(positions)} items, not {len(expected)} (CO_POSICAO "
                              f"{min(expected)}–{max(expected)} without {shown}){label}")
    return found


def _version_problem(booklet_rows: pd.DataFrame) -> str | None:
    """Why a booklet's TP_VERSAO_DIGITAL listing is unusable, or None (also without versions).

    Version *L* serves candidates of TP_LINGUA *L*, so its language items must be in *L*.
    """
    versions = booklet_rows["version"]
    if versions.isna().all():
        return None
    if versions.isna().any():
        return "TP_VERSAO_DIGITAL given for some rows of the booklet only"
    foreign = booklet_rows["item_language"].notna() & booklet_rows["item_language"].ne(versions)
    if foreign.any():
        return "a TP_VERSAO_DIGITAL version holds items of the other TP_LINGUA"
    return None


def _form_row_sets(booklet_rows: pd.DataFrame):
    """Yield (language, rows) for each form of one booklet.

    One form; or one per LC language (the common items plus that language's); or, for a
    booklet with TP_VERSAO_DIGITAL, the rows of version *L* as the form of language *L*.
    """
    versions = booklet_rows["version"]
    if versions.notna().any():
        for version in sorted(int(v) for v in versions.dropna().unique()):
            yield version, booklet_rows[versions.eq(version).fillna(False)]
        return
    languages = sorted(int(v) for v in booklet_rows["item_language"].dropna().unique())
    if not languages:
        yield None, booklet_rows
        return
    common = booklet_rows["item_language"].isna()
    for language in LANGUAGE_CODES:
        chosen = booklet_rows["item_language"].eq(language).fillna(False)
        yield language, booklet_rows[common | chosen]


def _listing_multiplicity(form_rows: pd.DataFrame) -> int:
    """How many times each CO_POSICAO of a form is listed: 1, 2 (every one twice), 0 (mixed)."""
    counts = form_rows["co_posicao"].value_counts()
    if (counts == 1).all():
        return 1
    if (counts == 2).all():
        return 2
    return 0


def _ordered_form(form_rows: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
    """The rows of one form in string order, and whether every position was listed twice.

    A doubled listing keeps, for each CO_POSICAO, the row listed first in the file (``rows``
    keeps file order): deterministic, and it is the first collection whenever the file lists
    the two collections one after the other.
    """
    doubled = _listing_multiplicity(form_rows) == 2
    if doubled:
        form_rows = form_rows[~form_rows["co_posicao"].duplicated(keep="first")]
    return form_rows.sort_values("co_posicao", kind="stable"), doubled


def build_form(booklet_id: int, language: int | None, ordered: pd.DataFrame) -> BookletForm:
    """A BookletForm from rows already in string order (columns as in ``ItemsTable.rows``).

    An item without CO_ITEM (NA / NULL) gets ``missing_item_id``.
    """
    keys = np.array([ord(k) if isinstance(k, str) and len(k) == 1 else 0 for k in ordered["key"]],
                    dtype=np.uint8)
    bank = stored_item_bank(ordered, scaling=PUBLISHED_SCALING)
    colour = ordered["colour"].dropna()
    item_ids = [missing_item_id(booklet_id, position) if pd.isna(item) else int(item)
                for item, position in zip(ordered["item_id"], ordered["co_posicao"], strict=True)]
    return BookletForm(
        booklet_id=booklet_id,
        area=str(ordered["area"].iloc[0]),
        language=language,
        colour=str(colour.iloc[0]) if len(colour) else "",
        item_ids=np.array(item_ids, dtype=np.int64),
        positions=ordered["co_posicao"].to_numpy(np.int64),
        keys=keys,
        bank=bank,
        language_items=int(ordered["item_language"].notna().sum()) if language is not None else 0,
    )
