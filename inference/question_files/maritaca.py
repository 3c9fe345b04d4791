"""maritaca-ai's ``enem`` JSONL: one object per line with ``id, exam, question, alternatives,
label, description, IU, ledor``, numbered over the whole printed exam. Read with
:func:`load_maritaca_jsonl`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from enem.areas import AREAS, ITEMS_PER_AREA
from inference.question_files.records import (
    ANNULLED_MARKS,
    OnInvalid,
    clean_text,
    collect,
    int_field,
    json_object,
    make_question,
)
from inference.questions import Question, QuestionFormatError

#: Area order inside the printed booklets from 2017 on (day 1: LC, CH; day 2: CN, MT).
#: 2009–2016 printed CH, CN on day 1 and LC, MT on day 2: pass ("CH", "CN", "LC", "MT") then.
BOOKLET_AREA_ORDER: tuple[str, ...] = ("LC", "CH", "CN", "MT")
PLACEHOLDER = "[[placeholder]]"
IMAGE_LABEL = "Descrição da imagem:"


def _fill_placeholders(texts: list[str], descriptions: list[str]) -> list[str]:
    """Replace the n-th ``[[placeholder]]`` (counted across ``texts`` in order) with the n-th
    description, stripped and labelled as the paper's files label theirs ("Descrição da imagem:
    …", so the item still reads as holding an image); a placeholder with no description left is
    removed."""
    queue = [d.strip() for d in descriptions if isinstance(d, str)]
    out = []
    for text in texts:
        parts = text.split(PLACEHOLDER)
        filled = parts[0]
        for part in parts[1:]:
            filled += (f"{IMAGE_LABEL} {queue.pop(0)}" if queue else "") + part
        out.append(filled)
    return out


def load_maritaca_jsonl(
    path: str | Path,
    area_order: Sequence[str] = BOOKLET_AREA_ORDER,
    *,
    booklet_id: int | None = None,
    on_invalid: OnInvalid = "raise",
) -> list[Question]:
    """Read maritaca-ai ``enem`` JSONL (``id, exam, question, alternatives, label, description,
    IU, ledor``).

    * Question number n = the integer in ``id`` ("questao_01" → 1), counted over the whole printed
      exam (1..180). Area = ``area_order[ceil(n / 45) - 1]`` and position = n − 45·(area index);
      the default order LC, CH, CN, MT is the booklet order from 2017 on (maritaca's files are
      2022+). Pass ("CH", "CN", "LC", "MT") for 2009–2016 exams.
    * LC positions 1–5 may appear twice (English and Spanish). The language is read from the id
      ("ingles"/"english" → 0, "espanhol"/"spanish" → 1); without such a marker the first
      occurrence of a number is English and the second Spanish.
    * Images: each ``[[placeholder]]`` in the question, then in the alternatives, is replaced in
      order by the matching entry of ``description`` (the description text itself, stripped);
      placeholders beyond the descriptions are removed. An option that is only an image without
      description becomes empty and the item is invalid.
    * ``label`` "Anulado" (any case) marks an annulled item. ``IU`` and ``ledor`` are not used.
    * Language is Portuguese; ``item_id`` is None (link by booklet_id/position/item_language).
    """
    path = Path(path)
    order = tuple(a.upper() for a in area_order)
    if sorted(order) != sorted(AREAS):
        raise ValueError(f"area_order must be a permutation of {AREAS}, got {area_order!r}")
    seen_numbers: dict[tuple[int, int], int] = {}

    def build(lineno: int, line: str) -> Question:
        where = f"line {lineno}"
        obj = json_object(line, ("id", "exam", "question", "alternatives", "label"), path, where)
        ident = str(obj["id"])
        match = re.search(r"(\d+)", ident)
        if not match:
            raise QuestionFormatError(f"id {ident!r} has no question number", path, where)
        number = int(match.group(1))
        if not 1 <= number <= ITEMS_PER_AREA * len(order):
            raise QuestionFormatError(f"question number {number} out of range", path, where)
        year = int_field(str(obj["exam"]), "exam", path, where)
        area_index = math.ceil(number / ITEMS_PER_AREA) - 1
        area = order[area_index]
        position = number - ITEMS_PER_AREA * area_index
        item_language = None
        if area == "LC" and position <= 5:
            lowered = ident.lower()
            if "ingl" in lowered or "engl" in lowered:
                item_language = 0
            elif "espan" in lowered or "span" in lowered:
                item_language = 1
            else:
                count = seen_numbers.get((year, number), 0)
                seen_numbers[(year, number)] = count + 1
                item_language = count if count in (0, 1) else None
        alternatives = obj["alternatives"]
        if not isinstance(alternatives, list):
            raise QuestionFormatError("alternatives must be a list of 5 strings", path, where)
        descriptions = obj.get("description") or []
        if not isinstance(descriptions, list):
            descriptions = [descriptions]
        raw = [obj["question"] if isinstance(obj["question"], str) else ""]
        raw += [a if isinstance(a, str) else "" for a in alternatives]
        filled = [clean_text(t) for t in _fill_placeholders(raw, descriptions)]
        label = str(obj["label"]).strip()
        annulled = label.lower() in ANNULLED_MARKS
        return make_question(
            path, where,
            year=year, area=area, language="pt", stem=filled[0], options=tuple(filled[1:]),
            key=None if annulled else label.upper(), annulled=annulled,
            booklet_id=booklet_id, position=position, item_language=item_language,
            source=f"maritaca:{path.name}:{ident}",
        )

    def records() -> Iterator[tuple[str, Any]]:
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if line.strip():
                    yield f"line {lineno}", (lambda n=lineno, s=line: build(n, s))

    return collect(records(), on_invalid, path)
