"""Assemble one demo question per item (Portuguese and English) and write the JSONL file.

Line format (UTF-8, one object per item and language)::

    {"year": 2023, "item_id": 123456, "area": "MT", "language": "pt", "stem": "...",
     "options": ["...", "...", "...", "...", "..."], "key": "C", "annulled": false,
     "source": "demo-synthetic"}

The key is the item's ``TX_GABARITO`` in ``ITENS_PROVA``; both languages share the option order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from demo.items import AREAS, AreaBank, ExamBank
from demo.question_core import LANGS, Draft, Template
from demo.questions import LANGUAGE_TEMPLATES, TEMPLATES
from enem.areas import OPTION_LETTERS

SOURCE = "demo-synthetic"


@dataclass(frozen=True)
class DemoQuestion:
    """One item's question: ``options[lang]`` has 5 strings, ``options[lang][key]`` is correct."""

    item_id: int
    area: str
    key: int
    draft: Draft
    options: dict[str, tuple[str, ...]]

    @property
    def key_letter(self) -> str:
        return OPTION_LETTERS[self.key]

    def records(self, year: int) -> list[dict[str, object]]:
        """The two JSONL objects (pt, en)."""
        return [
            {
                "year": year,
                "item_id": self.item_id,
                "area": self.area,
                "language": lang,
                "stem": self.draft.stem[lang],
                "options": list(self.options[lang]),
                "key": self.key_letter,
                "annulled": False,
                "source": SOURCE,
            }
            for lang in LANGS
        ]


def place_options(draft: Draft, key: int, rng: np.random.Generator) -> dict[str, tuple[str, ...]]:
    """Five options per language: the wrong ones shuffled (same order in both), the answer at
    ``key``."""
    perm = rng.permutation(4)
    out = {}
    for lang in LANGS:
        wrong = [draft.wrong[lang][i] for i in perm]
        out[lang] = tuple(wrong[:key] + [draft.correct[lang]] + wrong[key:])
        if len(set(out[lang])) != 5 or not all(o.strip() for o in out[lang]):
            raise ValueError(
                f"{draft.template}: options are not 5 distinct non-empty strings: {out[lang]}"
            )
    return out


class _Picker:
    """Draws templates for the items of one area; fact rows are used at most once."""

    def __init__(self, templates: tuple[Template, ...], rng: np.random.Generator) -> None:
        self.templates = templates
        self.rng = rng
        self.rows = {
            t.name: [int(i) for i in rng.permutation(t.table_size)]
            for t in templates
            if t.table_size is not None
        }
        self.stems: set[str] = set()

    def draft(self) -> Draft:
        for _ in range(200):
            usable = [t for t in self.templates if t.table_size is None or self.rows[t.name]]
            weights = np.array([t.weight for t in usable])
            template = usable[int(self.rng.choice(len(usable), p=weights / weights.sum()))]
            row = self.rows[template.name].pop() if template.table_size is not None else 0
            draft = template.make(self.rng, row)
            if draft.stem["pt"] not in self.stems:
                self.stems.add(draft.stem["pt"])
                return draft
        raise RuntimeError("could not draw a new question")


def area_questions(bank: AreaBank, rng: np.random.Generator) -> list[DemoQuestion]:
    """Questions for every item of one area, in canonical item order."""
    common = _Picker(TEMPLATES[bank.area], rng)
    language = {lang: _Picker((t,), rng) for lang, t in LANGUAGE_TEMPLATES.items()}
    out = []
    for i, item_id in enumerate(bank.item_ids):
        lang = int(bank.language[i])
        draft = common.draft() if lang < 0 else language[lang].draft()
        key = int(bank.key[i])
        out.append(
            DemoQuestion(int(item_id), bank.area, key, draft, place_options(draft, key, rng))
        )
    return out


def build_questions(exam: ExamBank, seed: int) -> list[DemoQuestion]:
    """All questions of the exam (185 items), areas in booklet order."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, exam.year, 4]))
    return [q for area in AREAS for q in area_questions(exam[area], rng)]


def write_questions_file(path: Path, exam: ExamBank, seed: int) -> list[DemoQuestion]:
    """Write ``questions_demo_YYYY.jsonl`` and return the questions."""
    questions = build_questions(exam, seed)
    lines = [json.dumps(rec, ensure_ascii=False) for q in questions for rec in q.records(exam.year)]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return questions
