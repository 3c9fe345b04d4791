"""Finding the item of a document that carries no question number, by its option texts.

lighteval's ENEM documents hold the question, its options and its gold index, but no id that
names the question (``inference.harness.lighteval_details``). They are matched against the
question texts stored for the exam (``import-questions``; maritaca's files are the texts of
lighteval's ``maritaca-ai/enem`` dataset): the five options, compared on their letters and
digits alone (:func:`~inference.harness.lighteval_details.text_key`), pick the item; when
several stored items share them, the stored stem's opening must also appear in the query.
"""

from __future__ import annotations

from collections import defaultdict

import duckdb

from enem.areas import OPTION_LETTERS
from inference.harness.lighteval_details import text_key
from store.harness_queries import item_areas, year_texts
from workflows.harness.linking import Unlinked

#: Letters and digits of a stored stem's opening that must appear in the query to tell items
#: with the same options apart.
STEM_KEY_CHARS = 60


class TextMatcher:
    """The stored texts of one exam in one language, indexed by their options."""

    def __init__(self, con: duckdb.DuckDBPyConnection, year: int, language: str = "pt"):
        texts = year_texts(con, year, language)
        self.year = year
        self.by_options: dict[tuple[str, ...], list[int]] = defaultdict(list)
        self.stems: dict[int, str] = {}
        for row in texts.itertuples(index=False):
            options = tuple(text_key(str(getattr(row, f"option_{x.lower()}")))
                            for x in OPTION_LETTERS)
            self.by_options[options].append(int(row.item_id))
            self.stems[int(row.item_id)] = text_key(str(row.stem))[:STEM_KEY_CHARS]
        self.areas = item_areas(con, year, list(self.stems))

    def item(self, options: tuple[str, ...], query: str) -> tuple[int, str]:
        """(item_id, area) of the stored text with these options; Unlinked when none or
        several match."""
        if not self.stems:
            raise Unlinked(f"no question texts of {self.year} in the store (import them: "
                           "enem-llm import-questions --format maritaca)")
        found = self.by_options.get(tuple(text_key(o) for o in options), [])
        if len(found) > 1:
            asked = text_key(query)
            found = [item for item in found if self.stems[item] in asked]
        if not found:
            raise Unlinked("no stored question text with these options")
        if len(found) > 1:
            raise Unlinked("several stored question texts with these options")
        item = found[0]
        if item not in self.areas:
            raise Unlinked("a stored text whose item is on no stored booklet")
        return item, self.areas[item]
