"""Importing an lm-evaluation-harness samples file (``--log_samples``) as one run.

Two kinds of documents are linked (``workflows.harness.linking``):

* documents ``export-task`` wrote (``workflows.harness.documents``): by the booklet, position
  and item they carry, in the option order (shuffle) they record;
* ENEM documents numbered over the printed exam, as the Portuguese fork's ``enem_challenge``
  task (eduagarcia/lm-evaluation-harness-pt, over ``eduagarcia/enem_challenge``: ``id``
  ``<year>_<number>``, ``exam``, ``question``, ``choices`` ``{label, text}``, ``answerKey``;
  EleutherAI/lm-evaluation-harness ``lm_eval/tasks/portuguese/enem.yaml`` and ``util.py`` show
  the same dataset and its few-shot ids ``2022_21``, ``2022_88``, ``2022_143``) and tasks over
  maritaca's files (``id`` ``questao_<number>``, ``exam``) number them: the number is the
  question's number in the printed exam, the options in their original order; the booklet
  comes from ``--booklet`` flags.

The settings come from the ``results_<date>.json`` written beside the samples when it is
there (task, output type, few-shot count, model and its arguments), else from the samples
file alone (its name gives the task, its folder the model).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from enem.areas import OPTION_LETTERS
from inference.harness.choices import read_answer
from inference.harness.lm_eval_samples import (
    LmEvalSamples,
    model_from_args,
    read_lm_eval_results,
    read_lm_eval_samples,
    results_file_for,
    task_settings,
)
from inference.harness.records import HarnessFormatError, ToolAnswer
from workflows.harness.documents import exported_doc, is_exported
from workflows.harness.linking import LinkCounts, Linker, Unlinked
from workflows.harness.runs import ORIGINAL_ORDER, HarnessRun, LinkedAnswer, store_harness_run
from workflows.harness.summary import HarnessImportSummary
from workflows.imported_runs import ResultsFormatError

#: The language of ENEM documents numbered over the printed exam (the exam's own texts).
NUMBERED_LANGUAGE = "pt"


def import_lm_eval(con, path: Path, overrides: dict,
                   flags: list[tuple[str, int]]) -> HarnessImportSummary:
    """Link and store one samples file as a run (see the module docstring); ResultsFormatError
    naming the line and field of a file that cannot be read, or when no answer links."""
    try:
        samples = read_lm_eval_samples(path)
        results_path = results_file_for(samples)
        found = task_settings(read_lm_eval_results(results_path), samples.task) \
            if results_path else {}
    except HarnessFormatError as error:
        raise ResultsFormatError(str(error)) from None
    settings = _settings(samples, results_path, found)
    shots = found.get("num_fewshot") if isinstance(found.get("num_fewshot"), int) else None
    linker, counts = Linker(con, flags), LinkCounts()
    delimiter = found.get("target_delimiter", " ")
    linked, seen = [], _Occurrences()
    for answer in samples.answers:
        try:
            linked.append(_link(linker, answer, shots, str(delimiter), seen,
                                f"{samples.path}: {answer.where}"))
        except Unlinked as unlinked:
            counts.note(unlinked)
    model = (model_from_args(found.get("model_args")) or found.get("model_name")
             or _folder_model(samples.path))
    run = HarnessRun("lm-eval", samples.path, samples.task, str(model), _run_shots(linked, shots),
                     settings, tuple(flags))
    return store_harness_run(con, run, linked, counts, linker, overrides)


def _settings(samples: LmEvalSamples, results_path: Path | None,
              found: dict[str, Any]) -> dict[str, Any]:
    """The tool's settings stored with the run."""
    return {"tool": "lm-eval", "task": samples.task, "samples_file": samples.path.name,
            "results_file": results_path.name if results_path else None,
            "filter": samples.filter, "lines_of_other_filters": samples.other_filter_lines,
            **found}


def _link(linker: Linker, answer: ToolAnswer, shots: int | None, delimiter: str,
          seen: _Occurrences, where: str) -> LinkedAnswer:
    """Place one sample (Unlinked when it does not land; ResultsFormatError naming
    ``where`` when an exported document's ids are not usable)."""
    doc = answer.doc
    read = read_answer(answer, delimiter)
    _check_choices(answer)
    if is_exported(doc):
        ids = exported_doc(doc, where)
        place = linker.at_position(ids.year, ids.booklet_id, ids.item_language, ids.position,
                                   ids.item_id)
        return LinkedAnswer(place, ids.shuffle, ids.permutation, read, ids.prompt_language,
                            ids.shots, ids.key)
    year, number, ident = enem_number(doc)
    _check_labels(doc)
    place = linker.by_number(year, number, seen.foreign_language(ident, year, number))
    key = doc.get("answerKey", doc.get("label"))
    return LinkedAnswer(place, 0, ORIGINAL_ORDER, read, NUMBERED_LANGUAGE, shots,
                        str(key).strip().upper() if key is not None else None)


def enem_number(doc: Mapping[str, Any]) -> tuple[int, int, str]:
    """(exam year, question number in the printed exam, id) of a numbered ENEM document:
    ``id`` ``2022_21`` or ``questao_21`` with ``exam`` ``2022``. Unlinked when the document
    carries no such id, or its exam is not a year's main exam (``2016_2_``, the second
    application)."""
    ident = str(doc.get("id", "")).strip()
    exam = str(doc.get("exam", "")).strip()
    prefix = re.match(r"((?:19|20)\d{2})_", ident)
    if exam and not re.fullmatch(r"\d{4}", exam):
        raise Unlinked("exam is not a year's main application (e.g. 2016_2_)")
    year = int(exam) if exam else int(prefix.group(1)) if prefix else None
    number = re.search(r"(\d+)\D*$", ident[len(prefix.group(0)):] if prefix else ident)
    if year is None or number is None:
        raise Unlinked("document without an ENEM id (YEAR_NUMBER or questao_NN with exam) or "
                       "export-task ids")
    return year, int(number.group(1)), ident


def _check_labels(doc: Mapping[str, Any]) -> None:
    """A numbered document must show its options A–E in order (its choices' labels)."""
    choices = doc.get("choices")
    labels = choices.get("label") if isinstance(choices, dict) else None
    if labels is not None and [str(x).strip() for x in labels] != list(OPTION_LETTERS):
        raise Unlinked("choices not labelled A-E in order")


def _check_choices(answer: ToolAnswer) -> None:
    if answer.loglikelihoods is not None and len(answer.loglikelihoods) != len(OPTION_LETTERS):
        raise Unlinked(f"not {len(OPTION_LETTERS)} choices")


class _Occurrences:
    """The foreign language of LC's first items, numbered alike in both languages: read from
    the id (``ingles``/``english`` 0, ``espanhol``/``spanish`` 1), else by order of appearance,
    English first (as ``inference.question_files.maritaca`` reads maritaca's files)."""

    def __init__(self) -> None:
        self.count: dict[tuple[int, int], int] = {}

    def foreign_language(self, ident: str, year: int, number: int) -> int | None:
        lowered = ident.lower()
        if "ingl" in lowered or "engl" in lowered:
            return 0
        if "espan" in lowered or "span" in lowered:
            return 1
        seen = self.count.get((year, number), 0)
        self.count[(year, number)] = seen + 1
        return seen if seen in (0, 1) else None


def _folder_model(path: Path) -> str:
    """The model a samples file's folder names: lm-eval writes into
    ``<output_path>/<model_name_sanitized>/``, the name's ``/`` made ``__``."""
    return path.parent.name.replace("__", "/") or "unknown-model"


def _run_shots(linked: list[LinkedAnswer], shots: int | None) -> int | None:
    """The run's solved examples: the documents' own when all agree (exported documents
    hold them in the prompt), else the tool's few-shot count."""
    own = {answer.shots for answer in linked}
    return own.pop() if len(own) == 1 else shots
