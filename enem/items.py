"""ITENS_PROVA: item parameters per booklet, turned into scoreable booklet forms.

A *form* is what one candidate answered: the items of one booklet (and, in LC, of one foreign
language) sorted by ``CO_POSICAO``. Character *k* of a response string is item *k* of its form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from analytics.irt import ItemBank
from enem.areas import AREAS, OPTION_LETTERS
from enem.csvfiles import check_readable, read_small_csv

REQUIRED_ITEM_COLUMNS: tuple[str, ...] = (
    "CO_POSICAO", "SG_AREA", "CO_ITEM", "TX_GABARITO",
    "NU_PARAM_A", "NU_PARAM_B", "NU_PARAM_C", "CO_PROVA",
)
ANNULLED_KEY = "X"


@dataclass(frozen=True)
class BookletForm:
    """The items one candidate of a booklet (and LC language) answered, in string order.

    Arrays have shape (n_items,). ``keys`` holds ASCII codes of the answer letters; ``bank`` has
    NaN parameters for abandoned or annulled items, so they drop out of every likelihood.
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

    ``rows`` is one typed row per file row (plus the sorted position ``position`` within its form);
    ``forms`` maps (booklet_id, language) to a BookletForm, language None outside LC; ``invalid``
    maps booklet ids that cannot be scored to the reason.
    """

    rows: pd.DataFrame
    forms: dict[tuple[int, int | None], BookletForm]
    invalid: dict[int, str] = field(default_factory=dict)

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

    def booklets(self) -> pd.DataFrame:
        """One row per booklet: booklet_id, area, colour, n_items, n_abandoned, valid, problem."""
        rows = self.rows
        summary = rows.groupby("booklet_id").agg(
            area=("area", "first"),
            colour=("colour", "first"),
            n_items=("position", lambda p: int(p.max()) if p.notna().any() else 0),
            n_abandoned=("abandoned", "sum"),
        ).reset_index()
        summary["valid"] = ~summary["booklet_id"].isin(list(self.invalid))
        summary["problem"] = summary["booklet_id"].map(self.invalid)
        return summary


def load_items(path: Path, encoding: str = "latin-1") -> ItemsTable:
    """Read and validate an ITENS_PROVA file. Raises UnusableFileError if it cannot be used."""
    check_readable(Path(path), REQUIRED_ITEM_COLUMNS, encoding)
    return parse_items(read_small_csv(Path(path), encoding))


def parse_items(raw: pd.DataFrame) -> ItemsTable:
    """Type and validate raw ITENS_PROVA text columns and build every booklet form."""
    rows = _typed_rows(raw)
    invalid = _find_invalid_booklets(rows)
    rows["position"] = pd.NA
    forms: dict[tuple[int, int | None], BookletForm] = {}
    for booklet_id, booklet_rows in rows.groupby("booklet_id", sort=True):
        if booklet_id in invalid:
            continue
        for language, form_rows in _form_row_sets(booklet_rows):
            ordered = form_rows.sort_values("co_posicao", kind="stable")
            rows.loc[ordered.index, "position"] = np.arange(1, len(ordered) + 1)
            forms[(int(booklet_id), language)] = build_form(int(booklet_id), language, ordered)
    rows["position"] = rows["position"].astype("Int16")
    return ItemsTable(rows=rows, forms=forms, invalid=invalid)


def _typed_rows(raw: pd.DataFrame) -> pd.DataFrame:
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

    rows = pd.DataFrame(index=raw.index)
    rows["booklet_id"] = pd.to_numeric(text("CO_PROVA"), errors="coerce").astype("Int64")
    rows["area"] = text("SG_AREA").map(lambda v: v.upper() if isinstance(v, str) else v)
    rows["co_posicao"] = pd.to_numeric(text("CO_POSICAO"), errors="coerce").astype("Int64")
    rows["item_id"] = pd.to_numeric(text("CO_ITEM"), errors="coerce").astype("Int64")
    rows["key"] = text("TX_GABARITO").map(lambda v: v.upper() if isinstance(v, str) else v)
    rows["skill"] = pd.to_numeric(text("CO_HABILIDADE"), errors="coerce").astype("Int64")
    rows["colour"] = text("TX_COR")
    lingua = pd.to_numeric(text("TP_LINGUA").replace("", None), errors="coerce")
    rows["item_language"] = lingua.astype("Int16")
    rows["adapted"] = pd.to_numeric(text("IN_ITEM_ADAPTADO"), errors="coerce").fillna(0).astype(bool)
    flagged = pd.to_numeric(text("IN_ITEM_ABAN"), errors="coerce").fillna(0).astype(int) == 1
    rows["abandon_reason"] = text("TX_MOTIVO_ABAN")
    problems = pd.Series("", index=raw.index)
    params = {}
    for name in ("a", "b", "c"):
        parsed, bad = number(f"NU_PARAM_{name.upper()}")
        params[name] = parsed
        problems = problems.where(~bad, problems + f"non-numeric NU_PARAM_{name.upper()}; ")
    present = pd.concat([params[n].notna() for n in "abc"], axis=1)
    partial = present.any(axis=1) & ~present.all(axis=1)
    problems = problems.where(~partial, problems + "only some of the three parameters given; ")
    annulled = rows["key"].eq(ANNULLED_KEY).fillna(False)
    rows["abandoned"] = flagged | ~present.all(axis=1) | annulled
    for name in "abc":
        rows[name] = params[name].where(~rows["abandoned"])
    bad_key = ~rows["key"].isin(list(OPTION_LETTERS)) & ~annulled
    problems = problems.where(~bad_key, problems + "answer key not in A-E/X; ")
    for column, label in (("booklet_id", "CO_PROVA"), ("co_posicao", "CO_POSICAO"), ("item_id", "CO_ITEM")):
        missing = rows[column].isna()
        problems = problems.where(~missing, problems + f"missing or non-numeric {label}; ")
    bad_area = ~rows["area"].isin(AREAS)
    problems = problems.where(~bad_area, problems + "unknown SG_AREA; ")
    rows["problem"] = problems.str.rstrip("; ").replace("", None)
    return rows


def _find_invalid_booklets(rows: pd.DataFrame) -> dict[int, str]:
    invalid: dict[int, str] = {}
    for _, row in rows[rows["problem"].notna()].iterrows():
        if pd.isna(row["booklet_id"]):
            continue
        booklet = int(row["booklet_id"])
        invalid.setdefault(booklet, f"item {row['item_id']} at CO_POSICAO {row['co_posicao']}: {row['problem']}")
    for booklet_id, booklet_rows in rows.dropna(subset=["booklet_id"]).groupby("booklet_id"):
        booklet = int(booklet_id)
        if booklet in invalid:
            continue
        if booklet_rows["area"].nunique() != 1:
            invalid[booklet] = "items from more than one area"
            continue
        for language, form_rows in _form_row_sets(booklet_rows):
            if form_rows["co_posicao"].duplicated().any():
                label = "" if language is None else f" (TP_LINGUA {language})"
                invalid[booklet] = f"repeated CO_POSICAO{label}"
                break
    return invalid


def _form_row_sets(booklet_rows: pd.DataFrame):
    """Yield (language, rows) for each form of one booklet: one form, or one per LC language."""
    languages = sorted(int(v) for v in booklet_rows["item_language"].dropna().unique())
    if not languages:
        yield None, booklet_rows
        return
    common = booklet_rows["item_language"].isna()
    for language in (0, 1):
        yield language, booklet_rows[common | booklet_rows["item_language"].eq(language).fillna(False)]


def build_form(booklet_id: int, language: int | None, ordered: pd.DataFrame) -> BookletForm:
    keys = np.array([ord(k) if isinstance(k, str) and len(k) == 1 else 0 for k in ordered["key"]],
                    dtype=np.uint8)
    bank = ItemBank.from_arrays(
        ordered["a"].to_numpy(float), ordered["b"].to_numpy(float), ordered["c"].to_numpy(float),
    )
    colour = ordered["colour"].dropna()
    return BookletForm(
        booklet_id=booklet_id,
        area=str(ordered["area"].iloc[0]),
        language=language,
        colour=str(colour.iloc[0]) if len(colour) else "",
        item_ids=ordered["item_id"].to_numpy(np.int64),
        positions=ordered["co_posicao"].to_numpy(np.int64),
        keys=keys,
        bank=bank,
        language_items=int(ordered["item_language"].notna().sum()) if language is not None else 0,
    )
