"""The documents ``export-task`` writes for lm-eval, and reading their ids back on import.

A document is one item in one option order (shuffle): the exact prompt the project sends for
it (``inference.prompts``, the options permuted as ``inference.shuffles`` permutes them for a
run with the same seed) and the ids that link a sample of it back to the store without
``--booklet`` flags. lm-eval logs each document whole in its samples (``doc``), so the ids come
back with the model's answer.

Fields: :data:`EXPORT_MARKER` (the task's name), ``year``, ``area``, ``booklet_id``,
``item_language`` (the LC form's foreign language, else null), ``position`` (1-based place in
the booklet form), ``item_id`` (CO_ITEM), ``shuffle``, ``permutation`` (the original letter
shown under each letter A–E), ``prompt_language``, ``shots`` (solved examples inside the
prompt), ``key`` (the original answer letter), ``prompt`` (lm-eval's ``doc_to_text``) and
``target`` (the index of the shown letter of the key: ``doc_to_target``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from enem.areas import OPTION_LETTERS
from inference.plan import WorkUnit
from inference.prompts import render_prompt
from inference.protocol import PROMPT_LANGUAGES
from inference.shuffles import apply_permutation, displayed_key
from workflows.imported_runs import ResultsFormatError

#: The field that marks a document written by ``export-task``; its value is the task's name.
EXPORT_MARKER = "enem_llm_task"


@dataclass(frozen=True)
class ExportedDoc:
    """The ids of an exported document, typed."""

    year: int
    booklet_id: int
    item_language: int | None
    position: int
    item_id: int
    shuffle: int
    permutation: str
    prompt_language: str
    shots: int
    key: str


def is_exported(doc: Mapping[str, Any]) -> bool:
    """Whether a logged document is one ``export-task`` wrote."""
    return EXPORT_MARKER in doc


def unit_documents(task: str, unit: WorkUnit, permutations: Any) -> list[dict[str, Any]]:
    """The documents of one work unit: one per row of ``permutations`` (shape (S, 5))."""
    key = unit.question.key
    if key is None:
        return []  # an annulled item is never asked
    documents = []
    for shuffle, perm in enumerate(permutations):
        shown = apply_permutation(unit.question.options, perm)
        documents.append({
            EXPORT_MARKER: task, "year": unit.question.year, "area": unit.area,
            "booklet_id": unit.booklet_id, "item_language": unit.item_language,
            "position": unit.position, "item_id": unit.item_id, "shuffle": shuffle,
            "permutation": "".join(OPTION_LETTERS[int(i)] for i in perm),
            "prompt_language": unit.prompt_language, "shots": unit.shots, "key": key,
            "prompt": render_prompt(unit.question, unit.shot_examples, shown),
            "target": OPTION_LETTERS.index(displayed_key(key, perm)),
        })
    return documents


def exported_doc(doc: Mapping[str, Any], where: str) -> ExportedDoc:
    """The ids of an exported document; ResultsFormatError naming ``where`` and the field of
    a value that cannot be one."""
    permutation = str(doc.get("permutation", ""))
    if sorted(permutation) != sorted(OPTION_LETTERS):
        raise ResultsFormatError(f"{where}: doc.permutation {permutation!r} is not an order "
                                 "of the letters A-E")
    prompt_language = doc.get("prompt_language")
    if prompt_language not in PROMPT_LANGUAGES:
        raise ResultsFormatError(f"{where}: doc.prompt_language is {prompt_language!r}, not "
                                 f"one of {', '.join(PROMPT_LANGUAGES)}")
    language = doc.get("item_language")
    return ExportedDoc(
        year=_whole(doc, "year", where), booklet_id=_whole(doc, "booklet_id", where),
        item_language=None if language is None else _whole(doc, "item_language", where),
        position=_whole(doc, "position", where), item_id=_whole(doc, "item_id", where),
        shuffle=_whole(doc, "shuffle", where), permutation=permutation,
        prompt_language=str(prompt_language),
        shots=_whole(doc, "shots", where), key=str(doc.get("key") or ""))


def _whole(doc: Mapping[str, Any], name: str, where: str) -> int:
    value = doc.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ResultsFormatError(f"{where}: doc.{name} is {value!r}, not a whole number")
    return value
