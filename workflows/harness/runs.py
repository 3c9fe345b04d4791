"""Storing a tool's linked answers as one run, re-scored like every import.

An import of one file is one run: its answers (one ``model_responses`` row per linked answer,
original letters), its settings (the tool's, in the run's ``options``), and its response
patterns scored booklet by booklet with the year's stored settings
(``workflows.imported_runs.score_imported``). Everything is checked and scored before the one
transaction that stores it: a refused file stores nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from enem.areas import OPTION_LETTERS
from inference.harness.choices import CHOICE_RULES, ReadAnswer
from inference.plan import model_slug
from inference.run_scoring import UNPARSED_MARK, no_letter_counts
from store.model_runs import append_run_rows, begin_run, bulk_import
from workflows.harness.linking import LinkCounts, Linker, Placement
from workflows.harness.summary import HarnessImportSummary
from workflows.imported_runs import (
    ImportedRun,
    ResultsFormatError,
    refuse_without_letters,
    run_scoring_options,
    score_imported,
)

#: The options in their original order: the permutation of an answer shown unshuffled.
ORIGINAL_ORDER = OPTION_LETTERS
#: Key differences kept in a run's settings (the summary prints them all).
KEPT_KEY_DIFFERENCES = 50


@dataclass(frozen=True)
class LinkedAnswer:
    """A tool's answer placed on a stored item: the placement, the shuffle (0 for a tool
    that shows the options once, in order), the permutation (the original letter shown under
    each letter A–E), the choice read, the prompt language and solved examples, and the key
    the tool's document gives (None when it gives none)."""

    place: Placement
    shuffle: int
    permutation: str
    read: ReadAnswer
    prompt_language: str
    shots: int | None
    file_key: str | None = None


@dataclass(frozen=True)
class HarnessRun:
    """What describes one imported file: the tool (``lm-eval`` / ``lighteval``), the file,
    the task name shown, the model's full name, the solved examples per prompt (None when the
    file does not say), the tool's settings (stored in the run's options) and the booklet
    flags used to link it."""

    tool: str
    source: Path
    task: str
    model_name: str
    shots: int | None
    settings: dict[str, Any] = field(default_factory=dict)
    flags: tuple[tuple[str, int], ...] = ()


def store_harness_run(con, run: HarnessRun, answers: list[LinkedAnswer], counts: LinkCounts,
                      linker: Linker, overrides: dict) -> HarnessImportSummary:
    """Store ``answers`` as one run and return the import's summary; ResultsFormatError when
    no answer was linked, or when more of them have no letter than a run may have to be
    published (``refuse_without_letters``; nothing is stored)."""
    answers = unique_answers(answers, counts)
    if not answers:
        raise ResultsFormatError(f"{run.source}: none of its answers could be linked to an item "
                                 f"of the store ({_top_reasons(counts)})")
    run_id = harness_run_id(run)
    responses = response_rows(run_id, answers)
    refuse_without_letters(run.source, *no_letter_counts(responses))
    years = sorted(int(y) for y in responses["year"].unique())
    options = run_scoring_options(con, years, overrides)
    scores = score_imported(con, responses, options)
    summary = HarnessImportSummary(
        run.source.name, [], years,
        len(responses[["year", "booklet_id"]].drop_duplicates()), [options],
        key_differences=key_differences(answers), linked=len(answers), skipped=counts.skipped,
        unknown=counts.unknown, abandoned=linker.unanswered(a.place for a in answers),
        unparsed=sum(a.read.index is None for a in answers),
        norm_disagreements=sum(a.read.norm_index not in (None, a.read.index) for a in answers))
    summary.notes = _notes(answers, summary)
    if run.tool in ACCURACY_TOOLS:
        summary.notes += _accuracy_notes(run.tool, responses, scores)
    record = run_record(run, run_id, responses, options.as_dict(), summary)
    with bulk_import(con):
        begin_run(con, record, model_row(run))
        append_run_rows(con, responses, scores)
    summary.runs.append(ImportedRun(run_id, record["label"], "shuffle", len(scores)))
    return summary


def unique_answers(answers: Iterable[LinkedAnswer], counts: LinkCounts) -> list[LinkedAnswer]:
    """The first answer of each (year, booklet, position, shuffle); later ones are counted as
    skipped (a pattern holds one answer per item)."""
    seen: set[tuple[int, int, int, int]] = set()
    kept = []
    for answer in answers:
        key = (answer.place.year, answer.place.booklet_id, answer.place.position, answer.shuffle)
        if key in seen:
            counts.skipped["a second answer to one item and shuffle"] += 1
            continue
        seen.add(key)
        kept.append(answer)
    counts.linked = len(kept)
    return kept


def harness_run_id(run: HarnessRun) -> str:
    """``<tool>-<model>-<task>-<10 hex>``: the hex digest covers the file's bytes, the tool
    and the booklet flags, so importing the same file again replaces its run."""
    digest = hashlib.sha256()
    with open(run.source, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    digest.update(json.dumps([run.tool, sorted(run.flags)]).encode())
    model = model_slug(model_id(run.model_name))[:24] or "model"
    return f"{run.tool}-{model}-{model_slug(run.task)[:24]}-{digest.hexdigest()[:10]}"


def model_id(model_name: str) -> str:
    """How the store names a model: the last part of its name or path (``org/name`` → name,
    ``folder/model.Q4_1.gguf`` → ``model.Q4_1``), as the project's own runs name a model."""
    last = model_name.rstrip("/").split("/")[-1]
    return last.removesuffix(".gguf") or model_name or "unknown-model"


def response_rows(run_id: str, answers: list[LinkedAnswer]) -> pd.DataFrame:
    """One ``model_responses`` row per answer: the chosen option as its original letter
    (``?`` when a generated text shows none, its correctness then NULL), the choices'
    probabilities in original order (log-likelihood answers) and the generated text."""
    rows = [_response(run_id, answer) for answer in answers]
    frame = pd.DataFrame(rows)
    frame["item_language"] = frame["item_language"].astype("Int16")
    frame["shots"] = frame["shots"].astype("Int16")
    if frame["answer_text"].isna().all():
        frame = frame.drop(columns="answer_text")
    return frame


def _response(run_id: str, answer: LinkedAnswer) -> dict[str, Any]:
    place, read, shown = answer.place, answer.read, answer.permutation
    choice = shown[read.index] if read.index is not None else UNPARSED_MARK
    probs: list[float | None] = [None] * len(OPTION_LETTERS)
    for displayed, prob in enumerate(read.probs or ()):
        probs[OPTION_LETTERS.index(shown[displayed])] = prob
    return {"run_id": run_id, "year": place.year, "area": place.area,
            "booklet_id": place.booklet_id, "item_language": place.item_language,
            "position": place.position, "item_id": place.item_id,
            "prompt_language": answer.prompt_language, "shots": answer.shots,
            "shuffle": answer.shuffle, "permutation": shown,
            **{f"prob_{x.lower()}": p for x, p in zip(OPTION_LETTERS, probs, strict=True)},
            "letter_mass": read.letter_mass, "choice": choice,
            "correct": None if read.index is None else choice == place.key,
            "answer_text": read.text}


def key_differences(answers: Iterable[LinkedAnswer]) -> list[str]:
    """One line per item whose key in the tool's document is not the stored key (the
    stored key decides correctness; many differences say the linking is off)."""
    found: dict[str, None] = {}
    for answer in answers:
        place, key = answer.place, answer.file_key
        if key in tuple(OPTION_LETTERS) and key != place.key:
            found[f"{place.year} booklet {place.booklet_id} position {place.position}: "
                  f"file {key}, store {place.key}"] = None
    return list(found)


def run_record(run: HarnessRun, run_id: str, responses: pd.DataFrame, scoring: dict,
               summary: HarnessImportSummary) -> dict[str, Any]:
    """The ``model_runs`` row of an imported file (see ``store.model_runs.begin_run``)."""
    shuffles = int(responses["shuffle"].nunique())
    prompt_type = " ".join(part for part in (run.tool, run.task, _shots_words(run.shots))
                           if part)
    label = " · ".join(part for part in (model_id(run.model_name), f"{run.tool} {run.task}",
                                         _shots_words(run.shots),
                                         f"{shuffles} shuffles" if shuffles > 1 else "")
                       if part)
    years = sorted(int(y) for y in responses["year"].unique())
    settings = {**run.settings, "model_name": run.model_name,
                "booklet_flags": [f"{area}={booklet}" for area, booklet in run.flags],
                "answers_linked": summary.linked, "answers_skipped": dict(summary.skipped),
                "answers_unknown": dict(summary.unknown),
                "items_abandoned": summary.abandoned, "unparsed_answers": summary.unparsed,
                "acc_norm_disagreements": summary.norm_disagreements,
                "key_differences": summary.key_differences[:KEPT_KEY_DIFFERENCES]}
    return {"run_id": run_id, "backend": "imported", "origin": run.tool, "year": years[0],
            "years": years, "areas": sorted(responses["area"].unique()),
            "languages": sorted(responses["prompt_language"].unique()),
            "shots": [] if run.shots is None else [run.shots], "n_shuffles": shuffles,
            "seed": None, "status": "finished", "repetition": "shuffle",
            "prompt_type": prompt_type, "temperature": None, "source": run.source.name,
            "scoring": scoring, "label": label, "options": settings}


def model_row(run: HarnessRun) -> dict[str, Any]:
    """The ``models`` row of an imported file's model."""
    return {"model_id": model_id(run.model_name),
            "notes": f"imported from {run.tool} ({run.model_name})"}


def _shots_words(shots: int | None) -> str:
    return "" if shots is None else f"{shots}-shot"


def _notes(answers: list[LinkedAnswer], summary: HarnessImportSummary) -> list[str]:
    """Which rule read the answers and how often acc_norm would have chosen otherwise."""
    rules = sorted({answer.read.rule for answer in answers})
    notes = [f"answers read as {CHOICE_RULES[rule]}" for rule in rules]
    if "loglikelihood" in rules:
        notes.append(f"the per-character rule (lm-eval's acc_norm) would choose another "
                     f"option in {summary.norm_disagreements:,} of {summary.linked:,} answers")
    return notes


#: The tools that report an accuracy of their own, which the import summary puts beside the
#: project's count.
ACCURACY_TOOLS = ("lm-eval", "lighteval")


def _accuracy_notes(tool: str, responses: pd.DataFrame, scores: pd.DataFrame) -> list[str]:
    """The tool's accuracy (every answer it gave, items INEP does not score included) beside
    the project's correct count (the scored items only), when the two count different items."""
    answered = responses["correct"].notna()
    right, given = int(responses.loc[answered, "correct"].astype(bool).sum()), int(answered.sum())
    ctt, scored = int(scores["ctt"].sum()), int(scores["n_scored"].sum())
    if not given or not scored or scored == given:
        return []
    left_out = given - scored
    answers = "answer" if left_out == 1 else "answers"
    return [f"{tool}'s accuracy counts every answer: {right:,} of {given:,} right "
            f"({right / given:.1%}); the project's scores leave out {left_out:,} {answers} "
            f"to items INEP does not score: {ctt:,} of {scored:,} right ({ctt / scored:.1%})"]


def _top_reasons(counts: LinkCounts) -> str:
    reasons = (counts.unknown + counts.skipped).most_common(3)
    return "; ".join(f"{reason}: {count:,}" for reason, count in reasons) or "no answers"
