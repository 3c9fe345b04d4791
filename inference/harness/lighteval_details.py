"""lighteval's details parquet: one row per document of one task.

Read from huggingface/lighteval (facts only):

* ``src/lighteval/logging/evaluation_tracker.py`` (``save_details``): the details of a task go
  to ``<output_dir>/details/<model_name>/<date>/details_<task>_<date>.parquet``, ``<task>``
  being the full task name ``suite|task|num_fewshot`` (``lighteval|enem_por_mcf:2022|0``); the
  results to ``<output_dir>/results/<model_name>/results_<date>.json`` (``config_general``,
  ``config_tasks``, ``results``, …).
* ``docs/source/saving-and-reading-results.mdx``: the columns. Since lighteval 0.10 a row holds
  ``doc`` (the ``Doc``), ``model_response`` (the ``ModelResponse``) and ``metric``; earlier
  versions wrote flat columns (``example``, ``full_prompt``, ``choices``, ``gold_index``,
  ``predictions``, ``num_asked_few_shots``, ``metrics``, ``specifics``, …; the ``Detail``
  dataclass of ``src/lighteval/logging/info_loggers.py``), ``predictions`` holding one
  log-likelihood per choice (or a ``(log-likelihood, is_greedy)`` pair) or the generated text.
* ``src/lighteval/tasks/requests.py`` (``Doc``: ``query``, ``choices``, ``gold_index``, ``id``,
  ``task_name``, ``num_asked_few_shots``, …) and ``src/lighteval/models/model_output.py``
  (``ModelResponse``: ``input``, ``text``, ``logprobs`` — one per choice for log-likelihood
  requests —, ``output_tokens``, …).
* ``src/lighteval/tasks/templates/multichoice.py`` and ``utils/formulation.py``: the ENEM
  tasks' docs (``src/lighteval/tasks/multilingual/tasks/enem.py``, over ``maritaca-ai/enem``,
  one task per year 2022–2024 and formulation MCF / CF / Hybrid) carry no question number:
  ``query`` is ``Pergunta: <question>\\n`` then, for MCF and Hybrid, one line `` A. <option>``
  per option, then ``Resposta:``; ``choices`` are `` A``… `` E`` (MCF) or the options' texts
  (CF, Hybrid). The row's ``doc.id`` is the document's row number in the dataset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from enem.areas import OPTION_LETTERS
from inference.harness.records import (
    HarnessFormatError,
    ToolAnswer,
    number,
    split_stamped_name,
)

#: The columns of each layout, as :func:`read_lighteval_details` tells them apart.
NESTED_COLUMNS = ("doc", "model_response")
FLAT_COLUMNS = ("choices", "predictions")
#: An option line of an MCF or Hybrid query: `` A. text``.
OPTION_LINE = re.compile(r"^\s*([A-E])\.\s?(.*)$")
#: A number in a task name, with its decimal part when it has one (``2023.5`` is one number).
TASK_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: The numbers among them that are exam years.
YEAR_NUMBER = re.compile(r"(?:19|20)\d{2}")


@dataclass(frozen=True)
class LightevalDetails:
    """One details file: its full task name (from the file name), date stamp, layout
    (``nested`` since 0.10, ``flat`` before) and one answer per row."""

    path: Path
    task: str
    date_id: str | None
    layout: str
    answers: list[ToolAnswer]


def is_lighteval_details(columns: list[str]) -> bool:
    """Whether a parquet file with these columns is a lighteval details file."""
    return all(c in columns for c in NESTED_COLUMNS) or all(c in columns for c in FLAT_COLUMNS)


def read_lighteval_details(path: Path) -> LightevalDetails:
    """Read a details parquet; HarnessFormatError naming the row and field of the first row
    that cannot be used."""
    path = Path(path)
    try:
        table = pq.read_table(path)
    except Exception as error:  # any unreadable file gets the same clear message
        raise HarnessFormatError(f"{path}: not a Parquet file ({error})") from error
    columns = table.column_names
    if all(c in columns for c in NESTED_COLUMNS):
        layout, build = "nested", _nested_answer
    elif all(c in columns for c in FLAT_COLUMNS):
        layout, build = "flat", _flat_answer
    else:
        raise HarnessFormatError(
            f"{path}: not a lighteval details file (needs the columns doc and model_response, "
            "or choices and predictions before lighteval 0.10)")
    task, date_id = split_stamped_name(path.name, "details", ".parquet")
    answers = [build(path, f"row {i}", row) for i, row in enumerate(table.to_pylist(), start=1)]
    if not answers:
        raise HarnessFormatError(f"{path}: the file has no rows")
    return LightevalDetails(path, task, date_id, layout, answers)


def _nested_answer(path: Path, where: str, row: dict[str, Any]) -> ToolAnswer:
    doc, response = row.get("doc"), row.get("model_response")
    if not isinstance(doc, dict) or not isinstance(response, dict):
        raise HarnessFormatError(f"{path}: {where}: doc and model_response must be structs")
    choices = _strings(path, where, "doc.choices", doc.get("choices"))
    logprobs = response.get("logprobs") or []
    texts = response.get("text") or []
    query = str(doc.get("query") or doc.get("full_prompt") or "")
    if logprobs:
        if len(logprobs) != len(choices):
            raise HarnessFormatError(f"{path}: {where}: model_response.logprobs has "
                                     f"{len(logprobs)} values for {len(choices)} choices")
        lls = tuple(number(v, f"{path}: {where}: model_response.logprobs[{i}]")
                    for i, v in enumerate(logprobs))
        return ToolAnswer(where, doc, choices, lls, query=query)
    if texts and isinstance(texts[0], str):
        return ToolAnswer(where, doc, choices, None, texts[0], None, query)
    raise HarnessFormatError(f"{path}: {where}: model_response has neither logprobs nor text")


def _flat_answer(path: Path, where: str, row: dict[str, Any]) -> ToolAnswer:
    choices = _strings(path, where, "choices", row.get("choices"))
    predictions = row.get("predictions") or []
    doc = {"query": row.get("example") or "", "full_prompt": row.get("full_prompt") or "",
           "choices": list(choices), "gold_index": row.get("gold_index"),
           "num_asked_few_shots": row.get("num_asked_few_shots"),
           "specific": row.get("specifics")}
    query = str(row.get("full_prompt") or row.get("example") or "")
    if predictions and isinstance(predictions[0], str):
        return ToolAnswer(where, doc, choices, None, predictions[0], None, query)
    if len(predictions) != len(choices) or not predictions:
        raise HarnessFormatError(f"{path}: {where}: predictions has {len(predictions)} values "
                                 f"for {len(choices)} choices")
    lls = tuple(number(p[0] if isinstance(p, (list, tuple)) else p,
                       f"{path}: {where}: predictions[{i}]") for i, p in enumerate(predictions))
    return ToolAnswer(where, doc, choices, lls, query=query)


def _strings(path: Path, where: str, name: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise HarnessFormatError(f"{path}: {where}: {name} is not a list of strings")
    return tuple(value)


def task_year(task: str) -> int | None:
    """The exam year a task name carries (``lighteval|enem_por_mcf:2022|0`` → 2022): its one
    number that is a whole year 19xx or 20xx. None when none is, or when several different
    ones are: a number such as ``2023.5`` is read whole, and is no year (never 2023)."""
    years = {int(number) for number in TASK_NUMBER.findall(task) if YEAR_NUMBER.fullmatch(number)}
    return years.pop() if len(years) == 1 else None


def task_fewshot(task: str) -> int | None:
    """The few-shot count ending a full task name (``…|3`` → 3), None when it ends otherwise."""
    found = re.search(r"\|(\d+)$", task)
    return int(found.group(1)) if found else None


def short_task(task: str) -> str:
    """A full task name without its suite and few-shot count (``enem_por_mcf:2022``)."""
    parts = task.split("|")
    return parts[1] if len(parts) == 3 else task


def option_texts(answer: ToolAnswer) -> tuple[str, ...] | None:
    """The five option texts an answer's document showed: its choices, or, when the choices
    are the bare letters (MCF), the `` A. text`` lines of its query; None when neither gives
    five."""
    stripped = tuple(c.strip() for c in answer.choices)
    if len(stripped) == len(OPTION_LETTERS) and stripped != tuple(OPTION_LETTERS):
        return stripped
    lines = [OPTION_LINE.match(line) for line in answer.query.splitlines()]
    found = [m for m in lines if m]
    # The last run A..E in order (the query's own options, after any solved examples').
    for start in range(len(found) - len(OPTION_LETTERS), -1, -1):
        run = found[start:start + len(OPTION_LETTERS)]
        if "".join(m.group(1) for m in run) == OPTION_LETTERS:
            return tuple(m.group(2).strip() for m in run)
    return None


def text_key(text: str) -> str:
    """``text`` reduced to its letters and digits, case-folded: lighteval's templates
    capitalise the options and change their final punctuation, so texts are compared on what
    those changes leave alone."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def gold_letter(answer: ToolAnswer) -> str | None:
    """The letter of the document's gold choice (its key), None when it has none."""
    gold = answer.doc.get("gold_index")
    if isinstance(gold, (list, tuple)):
        gold = gold[0] if len(gold) == 1 else None
    if isinstance(gold, int) and 0 <= gold < len(OPTION_LETTERS):
        return OPTION_LETTERS[gold]
    return None


def fewshot_count(answer: ToolAnswer) -> int | None:
    """The solved examples the document asked for (``num_asked_few_shots``), None if unset."""
    value = answer.doc.get("num_asked_few_shots")
    return int(value) if isinstance(value, int) and value >= 0 else None
