"""Importing a lighteval details parquet as one run.

The file's task name gives the exam year (``lighteval|enem_por_mcf:2022|0`` → 2022) and the
solved examples (its last part, else the documents' ``num_asked_few_shots``). Each document is
matched to a stored item by its option texts (``workflows.harness.matching``) and placed on its
area's booklet (``--booklet`` flags, else the area's lowest valid booklet). The options are in
their original order (lighteval's ENEM tasks do not shuffle them). The model's name comes from
the results file lighteval writes beside the details (``config_general.model_name``), else from
the details' folder (``details/<model_name>/<date>/``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from enem.areas import OPTION_LETTERS
from inference.harness.choices import read_answer
from inference.harness.lighteval_details import (
    LightevalDetails,
    fewshot_count,
    gold_letter,
    option_texts,
    read_lighteval_details,
    short_task,
    task_fewshot,
    task_year,
)
from inference.harness.records import HarnessFormatError, ToolAnswer
from workflows.harness.linking import LinkCounts, Linker, Unlinked
from workflows.harness.matching import TextMatcher
from workflows.harness.runs import ORIGINAL_ORDER, HarnessRun, LinkedAnswer, store_harness_run
from workflows.harness.summary import HarnessImportSummary
from workflows.imported_runs import ResultsFormatError

#: What the results file's ``config_general`` says about the model, kept with the run.
MODEL_FIELDS: tuple[str, ...] = ("model_sha", "model_dtype", "generation_parameters")
#: The language of lighteval's ENEM documents (maritaca's Portuguese texts).
DETAILS_LANGUAGE = "pt"


def import_lighteval(con, path: Path, overrides: dict,
                     flags: list[tuple[str, int]]) -> HarnessImportSummary:
    """Link and store one details file as a run (see the module docstring);
    ResultsFormatError naming the row and field of a file that cannot be read, a task name
    without a year, or when no answer links."""
    try:
        details = read_lighteval_details(path)
    except HarnessFormatError as error:
        raise ResultsFormatError(str(error)) from None
    year = task_year(details.task)
    if year is None:
        raise ResultsFormatError(f"{path}: the task name {details.task!r} names no exam year "
                                 "(one whole year, such as 2023; lighteval writes "
                                 "details_<suite|task:year|shots>_<date>.parquet)")
    shots = task_fewshot(details.task)
    if shots is None:
        shots = fewshot_count(details.answers[0])
    results_path, general = _results(details)
    matcher, linker, counts = TextMatcher(con, year), Linker(con, flags), LinkCounts()
    linked: list[LinkedAnswer] = []
    for answer in details.answers:
        try:
            linked.append(_link(matcher, linker, answer, year, shots))
        except Unlinked as unlinked:
            counts.note(unlinked)
    model_info: dict[str, Any] = {key: general[key] for key in MODEL_FIELDS if key in general}
    settings: dict[str, Any] = {
        "tool": "lighteval", "task": details.task, "details_file": path.name,
        "details_layout": details.layout, "num_fewshot": shots,
        "results_file": results_path.name if results_path else None, **model_info}
    model = general.get("model_name") or _folder_model(details)
    run = HarnessRun("lighteval", details.path, short_task(details.task), str(model), shots,
                     settings, tuple(flags))
    return store_harness_run(con, run, linked, counts, linker, overrides)


def _link(matcher: TextMatcher, linker: Linker, answer: ToolAnswer, year: int,
          shots: int | None) -> LinkedAnswer:
    """Place one document (Unlinked when it does not land)."""
    options = option_texts(answer)
    if options is None:
        raise Unlinked("document without five option texts")
    if answer.loglikelihoods is not None and len(answer.loglikelihoods) != len(OPTION_LETTERS):
        raise Unlinked(f"not {len(OPTION_LETTERS)} choices")
    item, area = matcher.item(options, answer.query)
    place = linker.by_item(year, item, area)
    # lighteval's per-character normalisation divides by the logged choice string itself.
    read = read_answer(answer, delimiter="")
    return LinkedAnswer(place, 0, ORIGINAL_ORDER, read, DETAILS_LANGUAGE, shots,
                        gold_letter(answer))


def _results(details: LightevalDetails) -> tuple[Path | None, dict[str, Any]]:
    """The results file written with the details (``<output_dir>/results/<model_name>/
    results_<date>.json``) and its ``config_general``; (None, {}) when it is not there."""
    model_dir = _model_folder(details)
    nothing: tuple[Path | None, dict[str, Any]] = (None, {})
    if model_dir is None or details.date_id is None:
        return nothing
    output_dir, model_name = model_dir
    path = output_dir / "results" / model_name / f"results_{details.date_id}.json"
    try:
        general = json.loads(path.read_text(encoding="utf-8")).get("config_general") or {}
    except (OSError, ValueError, AttributeError):
        return nothing
    return path, general if isinstance(general, dict) else {}


def _model_folder(details: LightevalDetails) -> tuple[Path, str] | None:
    """(output dir, model name) of ``<output_dir>/details/<model_name>/<date>/<file>``."""
    parts = details.path.resolve().parts
    head = parts[:-2]
    if "details" not in head:
        return None
    at = len(head) - 1 - head[::-1].index("details")
    return Path(*parts[:at]), "/".join(parts[at + 1:-2])


def _folder_model(details: LightevalDetails) -> str:
    found = _model_folder(details)
    return found[1] if found and found[1] else details.path.parent.parent.name or "unknown-model"
