"""lm-evaluation-harness's per-sample log (``--log_samples``) and its results file.

Read from EleutherAI/lm-evaluation-harness (facts only):

* ``lm_eval/loggers/evaluation_tracker.py`` (``save_results_samples``,
  ``save_results_aggregated``): the samples of a task go to
  ``<output_path>/<model_name_sanitized>/samples_<task>_<date>.jsonl``, one JSON object a line,
  and the aggregate to ``results_<date>.json`` in the same folder with the same date stamp
  (``datetime.now().isoformat()`` with ``:`` made ``-``). Before a line is written its
  ``arguments`` become ``{"gen_args_<i>": {"arg_<j>": …}}`` (request i, its argument j),
  ``resps`` and ``filtered_resps`` pass through ``sanitize_list`` and ``target`` through
  ``str``.
* ``lm_eval/utils.py`` (``sanitize_list``): every leaf of those nested lists becomes a string,
  so a log-likelihood pair reads ``["-12.5", "False"]``.
* ``lm_eval/evaluator.py`` (``evaluate``): a line holds ``doc_id``, ``doc``, ``target``,
  ``arguments`` (one request per choice for ``multiple_choice``: context and continuation),
  ``resps``, ``filtered_resps`` (one entry per request after the filter),
  ``doc_hash``, ``prompt_hash``, ``target_hash`` and each metric's value; newer versions add
  ``filter`` (the filter pipeline's name) and ``metrics``. A task with several filters logs each
  document once per filter. The results file holds ``results``, ``configs`` (each task's
  config: ``task``, ``output_type``, ``num_fewshot``, ``target_delimiter``, …), ``versions``,
  ``n-shot`` and ``config`` (``model``, ``model_args``, …).

Older files (before ``gen_args`` existed) keep ``arguments`` as a list of ``[context,
continuation]`` and numbers as numbers; both are read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference.harness.records import (
    HarnessFormatError,
    ToolAnswer,
    number,
    split_stamped_name,
)

#: Fields every sample line must hold.
REQUIRED_FIELDS = ("doc_id", "doc", "arguments", "filtered_resps")


@dataclass(frozen=True)
class LmEvalSamples:
    """One samples file: its task (from the file name), date stamp (None when the name has
    none), the filter whose lines were read (None when lines name none), the answers of that
    filter in file order, and how many lines belonged to other filters (not read)."""

    path: Path
    task: str
    date_id: str | None
    filter: str | None
    answers: list[ToolAnswer]
    other_filter_lines: int


def read_lm_eval_samples(path: Path) -> LmEvalSamples:
    """Read a ``samples_<task>_<date>.jsonl`` file; HarnessFormatError naming the line and the
    field of the first line that cannot be used (or an empty file)."""
    path = Path(path)
    task, date_id = split_stamped_name(path.name, "samples", ".jsonl")
    chosen: str | None = None
    answers: list[ToolAnswer] = []
    others = 0
    for where, obj in _lines(path):
        name = obj.get("filter")
        if answers and name != chosen:
            others += 1  # the same documents again, through another filter
            continue
        chosen = name
        answers.append(_answer(path, where, obj))
    if not answers:
        raise HarnessFormatError(f"{path}: the file holds no sample")
    return LmEvalSamples(path, task, date_id, chosen, answers, others)


def _lines(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(``line N``, object) of every non-blank line; each must be a JSON object."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise HarnessFormatError(f"{path}: {error.strerror or error}") from None
    with handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"line {lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as error:
                raise HarnessFormatError(f"{path}: {where}: not JSON ({error.msg})") from None
            if not isinstance(obj, dict):
                raise HarnessFormatError(f"{path}: {where}: not a JSON object")
            yield where, obj


def _answer(path: Path, where: str, obj: dict[str, Any]) -> ToolAnswer:
    """The ToolAnswer of one line (a multiple-choice or a generation sample)."""
    missing = [name for name in REQUIRED_FIELDS if name not in obj]
    if missing:
        raise HarnessFormatError(f"{path}: {where}: missing field(s) {', '.join(missing)}")
    if not isinstance(obj["doc"], dict):
        raise HarnessFormatError(f"{path}: {where}: doc is not an object")
    requests = _requests(path, where, obj["arguments"])
    filtered = obj["filtered_resps"]
    if not isinstance(filtered, list) or not filtered:
        raise HarnessFormatError(f"{path}: {where}: filtered_resps is not a non-empty list")
    query = str(requests[0][0]) if requests else ""
    if all(isinstance(entry, list) and entry for entry in filtered):
        # multiple_choice: one [log-likelihood, is_greedy] per choice, in the choices' order.
        if len(filtered) != len(requests):
            raise HarnessFormatError(f"{path}: {where}: filtered_resps has {len(filtered)} "
                                     f"entries for {len(requests)} requests (arguments)")
        lls = tuple(number(entry[0], f"{path}: {where}: filtered_resps[{i}][0]")
                    for i, entry in enumerate(filtered))
        return ToolAnswer(where, obj["doc"], tuple(str(r[1]) for r in requests), lls,
                          query=query)
    if isinstance(filtered[0], str):
        return ToolAnswer(where, obj["doc"], (), None, _first_text(obj.get("resps")),
                          filtered[0], query)
    raise HarnessFormatError(f"{path}: {where}: filtered_resps holds neither one "
                             "[log-likelihood, is_greedy] pair per choice nor a generated answer")


def _requests(path: Path, where: str, arguments: Any) -> list[tuple[Any, Any]]:
    """(context, second argument) of each request, in request order: ``gen_args_<i>`` objects
    (``arg_0``, ``arg_1``) or, in older files, ``[context, continuation]`` lists."""
    if isinstance(arguments, dict):
        def order(name: str) -> int:
            suffix = name.rsplit("_", 1)[-1]
            if not (name.startswith("gen_args_") and suffix.isdigit()):
                raise HarnessFormatError(f"{path}: {where}: arguments key {name!r} is not "
                                         "gen_args_<i>")
            return int(suffix)

        requests = []
        for name in sorted(arguments, key=order):
            request = arguments[name]
            if not isinstance(request, dict) or "arg_0" not in request:
                raise HarnessFormatError(f"{path}: {where}: arguments.{name} has no arg_0")
            requests.append((request["arg_0"], request.get("arg_1")))
        return requests
    if isinstance(arguments, list) and all(isinstance(a, list) and a for a in arguments):
        return [(a[0], a[1] if len(a) > 1 else None) for a in arguments]
    raise HarnessFormatError(f"{path}: {where}: arguments is neither gen_args objects nor a "
                             "list of [context, continuation]")


def _first_text(resps: Any) -> str | None:
    """The first generated text of ``resps`` (``[[text, …]]``), None when there is none."""
    while isinstance(resps, list) and resps:
        resps = resps[0]
    return resps if isinstance(resps, str) else None


def results_file_for(samples: LmEvalSamples) -> Path | None:
    """The ``results_<date>.json`` written with a samples file (same folder, same date
    stamp), None when the samples file's name has no stamp or the results file is absent."""
    if samples.date_id is None:
        return None
    candidate = samples.path.with_name(f"results_{samples.date_id}.json")
    return candidate if candidate.is_file() else None


def read_lm_eval_results(path: Path) -> dict[str, Any]:
    """A ``results_<date>.json`` as a dict; HarnessFormatError when it is not a JSON object."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise HarnessFormatError(f"{path}: not a readable JSON file ({error})") from None
    if not isinstance(obj, dict):
        raise HarnessFormatError(f"{path}: not a JSON object")
    return obj


def task_settings(results: dict[str, Any], task: str) -> dict[str, Any]:
    """What a results file says about ``task`` and the model: task, output_type, num_fewshot
    (``n-shot``, else the task config's), target_delimiter, version, model, model_args and the
    generation settings; keys the file lacks are left out."""
    config = _mapping(_mapping(results.get("configs")).get(task))
    general = _mapping(results.get("config"))
    shots = _mapping(results.get("n-shot")).get(task, config.get("num_fewshot"))
    found = {
        "task": config.get("task"), "output_type": config.get("output_type"),
        "num_fewshot": shots, "target_delimiter": config.get("target_delimiter"),
        "task_version": _mapping(results.get("versions")).get(task),
        "generation_kwargs": config.get("generation_kwargs"),
        "model": general.get("model"), "model_args": general.get("model_args"),
        "model_name": results.get("model_name"), "git_hash": results.get("git_hash"),
        "chat_template_sha": results.get("chat_template_sha"),
        "fewshot_as_multiturn": results.get("fewshot_as_multiturn"),
    }
    return {key: value for key, value in found.items() if value is not None}


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


#: The ``model_args`` keys lm-eval reads a model's name from, in its order
#: (``GeneralConfigTracker._get_model_name``).
MODEL_ARG_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")


def model_from_args(model_args: Any) -> str | None:
    """The model a ``model_args`` value names (``pretrained=org/name,dtype=…`` → ``org/name``;
    a dict is read the same way), None when it names none. A GGUF file (``gguf_file=``) is
    the model itself, its folder or repository only where it lies: ``<pretrained>/<file>``."""
    if isinstance(model_args, dict):
        pairs = {str(k): str(v) for k, v in model_args.items()}
    elif isinstance(model_args, str):
        pairs = dict(part.split("=", 1) for part in model_args.split(",") if "=" in part)
    else:
        return None
    named = next((pairs[key].strip() for key in MODEL_ARG_KEYS if pairs.get(key)), None)
    gguf = pairs.get("gguf_file", "").strip()
    if gguf:
        return f"{named.rstrip('/')}/{gguf}" if named else gguf
    return named
