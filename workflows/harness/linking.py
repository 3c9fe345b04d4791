"""Where a tool's answer lands in the store: the item (CO_ITEM) of a booklet position.

Three ways in, one per kind of document:

* :meth:`Linker.by_number`: a question number of the printed exam (1–180), as lm-eval's
  ``enem_challenge`` ids (``2022_21``) and maritaca's ``questao_21`` give it. Numbers map to an
  area and a position as ``inference.question_files.maritaca`` maps them (45 a area, in the
  exam's area order: LC, CH, CN, MT from 2017, CH, CN, LC, MT before); the booklet the
  numbers refer to comes from ``--booklet AREA=CO_PROVA`` flags, as for ``import-questions``.
* :meth:`Linker.at_position`: a booklet and position the document carries itself (the
  documents ``export-task`` writes); the stored item there must be the document's item.
* :meth:`Linker.by_item`: an item already identified (lighteval's documents, by their option
  texts), placed on the flagged booklet of its area or, without a flag, the area's lowest
  valid booklet.

An answer that cannot land raises :class:`Unlinked`: *unknown* when nothing in the store
matches it, *skipped* when it matches an item the run leaves out on purpose (an annulled
item, the English version of a foreign-language item: imported runs answer the Spanish LC form,
as the project's runs and the paper do, and a second answer to one item and shuffle).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import duckdb
import numpy as np

from enem.areas import AREAS, ITEMS_PER_AREA, OPTION_LETTERS
from enem.items import BookletForm
from inference.question_files.maritaca import BOOKLET_AREA_ORDER
from store.harness_queries import booklet_places, stored_years
from store.model_runs import default_booklet, load_form

#: The printed exam's area order before 2017 (day 1 CH, CN; day 2 LC, MT).
AREA_ORDER_BEFORE_2017: tuple[str, ...] = ("CH", "CN", "LC", "MT")
#: The first exam printed in ``BOOKLET_AREA_ORDER`` (LC, CH, CN, MT).
FIRST_YEAR_OF_CURRENT_ORDER = 2017
#: The LC foreign language of imported runs (1 Spanish, as the project's runs and the paper).
RUN_LC_LANGUAGE = 1
#: The foreign-language items open the LC booklet.
FOREIGN_LANGUAGE_ITEMS = 5


class Unlinked(Exception):
    """An answer that does not land in the store; ``skipped`` tells a deliberate omission
    from an answer nothing in the store matches (unknown). ``reason`` is counted as given, so
    it names no single document."""

    def __init__(self, reason: str, skipped: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.skipped = skipped


@dataclass(frozen=True)
class Placement:
    """An item of a stored booklet form: its place (year, area, booklet, the form's LC
    language or None, 1-based position) and CO_ITEM and stored key (a letter A–E)."""

    year: int
    area: str
    booklet_id: int
    item_language: int | None
    position: int
    item_id: int
    key: str


@dataclass
class LinkCounts:
    """Answers linked, and those skipped or unknown counted by reason."""

    linked: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    unknown: Counter[str] = field(default_factory=Counter)

    def note(self, error: Unlinked) -> None:
        (self.skipped if error.skipped else self.unknown)[error.reason] += 1


def parse_booklet_flags(values: Iterable[str]) -> list[tuple[str, int]]:
    """``AREA=CO_PROVA`` values as (area, booklet) pairs (ValueError naming a bad one). An
    area may be given once per exam year: ``--booklet MT=1234 --booklet MT=987``."""
    pairs = []
    for value in values:
        area, _, booklet = value.partition("=")
        if area.upper() not in AREAS or not re.fullmatch(r"[0-9]{1,9}", booklet):
            raise ValueError(f"--booklet expects AREA=CO_PROVA, got {value!r}")
        pairs.append((area.upper(), int(booklet)))
    return pairs


class Linker:
    """Places answers on the store's booklet forms (read once each)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, flags: Iterable[tuple[str, int]] = ()):
        self.con = con
        self.years = stored_years(con)
        self.booklets = self._flagged_booklets(flags)
        self._forms: dict[tuple[int, int, int | None], BookletForm | None] = {}
        #: Items of each form read, by (year, booklet, the form's own language).
        self._sizes: dict[tuple[int, int, int | None], int] = {}

    def _flagged_booklets(self, flags: Iterable[tuple[str, int]]) -> dict[tuple[int, str], int]:
        """(year, area) → booklet of each flag: the stored booklet of that area with the id
        (ValueError when there is none, or two flags name one exam's area)."""
        chosen: dict[tuple[int, str], int] = {}
        for area, booklet in flags:
            years = [year for year, stored in booklet_places(self.con, booklet) if stored == area]
            if not years:
                raise ValueError(f"--booklet {area}={booklet}: no {area} booklet {booklet} in "
                                 "the store")
            for year in years:
                if chosen.get((year, area), booklet) != booklet:
                    raise ValueError(f"--booklet: two {area} booklets of {year} "
                                     f"({chosen[(year, area)]} and {booklet})")
                chosen[(year, area)] = booklet
        return chosen

    def by_number(self, year: int, number: int, foreign_language: int | None) -> Placement:
        """The item of printed question ``number`` of exam ``year`` on the flagged booklet.
        ``foreign_language``: 0 English, 1 Spanish for LC's first items, None if unknown."""
        self._check_year(year)
        if not 1 <= number <= ITEMS_PER_AREA * len(AREAS):
            raise Unlinked(f"question number outside 1–{ITEMS_PER_AREA * len(AREAS)}")
        order = (BOOKLET_AREA_ORDER if year >= FIRST_YEAR_OF_CURRENT_ORDER
                 else AREA_ORDER_BEFORE_2017)
        index = (number - 1) // ITEMS_PER_AREA
        area, position = order[index], number - ITEMS_PER_AREA * index
        booklet = self.booklets.get((year, area))
        if booklet is None:
            raise Unlinked(f"no booklet for {year} {area} (use --booklet {area}=CO_PROVA)")
        language = None
        if area == "LC":
            if position <= FOREIGN_LANGUAGE_ITEMS and foreign_language not in (None,
                                                                                RUN_LC_LANGUAGE):
                raise Unlinked("English version of a foreign-language item (imported runs "
                               "answer the Spanish one)", skipped=True)
            language = RUN_LC_LANGUAGE
        return self._place(year, booklet, language, position)

    def on_form(self, year: int, booklet: int, item_language: int | None,
                position: int) -> Placement:
        """The item at ``position`` (1-based) of a stored booklet form."""
        self._check_year(year)
        return self._place(year, booklet, item_language, position)

    def at_position(self, year: int, booklet: int, item_language: int | None, position: int,
                    item_id: int) -> Placement:
        """The item at ``position`` of a stored booklet form, which must be ``item_id``."""
        self._check_year(year)
        place = self._place(year, booklet, item_language, position)
        if place.item_id != item_id:
            raise Unlinked("the store holds another item at the document's booklet position "
                           "(re-ingested since the export?)")
        return place

    def by_item(self, year: int, item_id: int, area: str) -> Placement:
        """Where ``item_id`` sits on its area's flagged (else lowest valid) booklet."""
        self._check_year(year)
        booklet = self.booklets.get((year, area))
        if booklet is None:
            try:
                booklet = default_booklet(self.con, year, area)
            except ValueError:
                raise Unlinked(f"no scoreable {area} booklet of {year}") from None
        language = RUN_LC_LANGUAGE if area == "LC" else None
        hits = np.flatnonzero(self._form(year, booklet, language).item_ids == item_id)
        if not len(hits):
            other = self._form(year, booklet, 0) if area == "LC" else None
            if other is not None and (other.item_ids == item_id).any():
                raise Unlinked("English version of a foreign-language item (imported runs "
                               "answer the Spanish one)", skipped=True)
            raise Unlinked(f"item not on {year} {area} booklet {booklet}")
        return self._place(year, booklet, language, int(hits[0]) + 1)

    def unanswered(self, places: Iterable[Placement]) -> int:
        """Items of the forms used that no answer reached (abandoned for the run)."""
        reached: dict[tuple[int, int, int | None], set[int]] = {}
        for place in places:
            reached.setdefault((place.year, place.booklet_id, place.item_language),
                               set()).add(place.position)
        return sum(self._sizes[key] - len(positions) for key, positions in reached.items())

    def _check_year(self, year: int) -> None:
        if year not in self.years:
            raise Unlinked(f"exam {year} not in the store")

    def _form(self, year: int, booklet: int, language: int | None) -> BookletForm:
        key = (year, booklet, language)
        if key not in self._forms:
            self._forms[key] = self._read_form(year, booklet, language)
        form = self._forms[key]
        if form is None:
            raise Unlinked(f"booklet {booklet} of {year} not in the store")
        return form

    def _read_form(self, year: int, booklet: int, language: int | None) -> BookletForm | None:
        try:
            form = load_form(self.con, year, booklet, language)
        except ValueError:
            return None
        self._sizes[(year, booklet, form.language)] = form.n_items
        return form

    def _place(self, year: int, booklet: int, language: int | None,
               position: int) -> Placement:
        form = self._form(year, booklet, language)
        if not 1 <= position <= form.n_items:
            raise Unlinked(f"position outside booklet {booklet} ({form.n_items} items)")
        code = int(form.keys[position - 1])
        key = chr(code) if code else ""
        if key not in OPTION_LETTERS or len(key) != 1:
            raise Unlinked("annulled item (no answer key)", skipped=True)
        return Placement(year, form.area, booklet, form.language, position,
                         int(form.item_ids[position - 1]), key)
