"""``export-task``: a booklet of the store as an lm-evaluation-harness task.

Writes two files into the output folder:

* ``<task>.jsonl``: one document per item and option order (``workflows.harness.documents``),
  with the project's exact prompt, the same prompt ``enem-llm prompt`` prints and a run with
  these settings sends (the solved examples are inside it);
* ``<task>.yaml``: the task config. Its keys follow lm-eval's task guide
  (EleutherAI/lm-evaluation-harness ``docs/new_task_guide.md``, "Using Local Datasets" and
  "Multiple choice format"): ``dataset_path: json`` with ``dataset_kwargs.data_files`` for a
  local JSON Lines file, ``output_type: multiple_choice``, ``doc_to_text`` and
  ``doc_to_target`` naming document fields, ``doc_to_choice`` the letters A–E,
  ``target_delimiter: ""`` (the prompt ends in ``(``, so each choice's continuation is its
  letter alone, as the project's letter-prob method reads it), ``num_fewshot: 0`` (lm-eval
  never overrides a task that sets 0: ``lm_eval/evaluator.py``, ``simple_evaluate``) and
  ``metric_list``.

Run it with ``lm_eval --model vllm --model_args pretrained=MODEL --tasks <task>
--include_path <folder> --log_samples --output_path OUT`` and bring the answers back with
``enem-llm import-results OUT/<model>/samples_<task>_<date>.jsonl`` (no ``--booklet`` flags:
each document carries its ids).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from enem.areas import OPTION_LETTERS
from inference.plan import RunSpec, build_plan
from inference.shuffles import option_permutations
from store.connection import connected
from store.model_runs import ExamReader
from workflows.harness.documents import unit_documents
from workflows.runs.execution import check_booklet_areas

#: Where ``export-task`` writes when no ``--output`` is given.
DEFAULT_OUTPUT = Path("lm_eval_tasks")


@dataclass(frozen=True)
class ExportedTask:
    """What an export wrote: the task's name, its two files, the documents and items
    written, the booklet's items and the items left out (with why)."""

    task: str
    config: Path
    documents: Path
    n_documents: int
    n_items: int
    booklet_items: int
    skipped: list[str]

    def lines(self) -> list[str]:
        """The summary as the command line prints it."""
        written = (f"wrote task {self.task}: {self.n_documents:,} documents ({self.n_items} of "
                   f"the booklet's {self.booklet_items} items)")
        out = [written, f"  config:    {self.config}", f"  documents: {self.documents}"]
        out += [f"  left out: {reason}" for reason in self.skipped]
        out.append(f"run it: lm_eval --model vllm --model_args pretrained=MODEL --tasks "
                   f"{self.task} --include_path {self.config.parent} --log_samples "
                   "--output_path OUT")
        out.append("then:   enem-llm import-results OUT/<model>/samples_"
                   f"{self.task}_<date>.jsonl")
        return out


def export_task(db_path: Path, *, year: int, area: str, booklet: int | None = None,
                language: str = "pt", shots: int = 0, n_shuffles: int = 30, seed: int = 0,
                lc_language: int = 1, output: Path = DEFAULT_OUTPUT) -> ExportedTask:
    """Write the task of one booklet (default: the area's lowest valid one) in one prompt
    language; ValueError when the booklet is of another area or has no text in the language.
    ``n_shuffles`` option orders per item, drawn with ``seed`` as a project run draws them."""
    spec = RunSpec(model="-", backend="random", year=year, areas=(area,), languages=(language,),
                   shots=(shots,), n_shuffles=n_shuffles, seed=seed, lc_language=lc_language,
                   booklets={area: booklet} if booklet else {})
    with connected(Path(db_path), read_only=True) as con:
        plan = build_plan(ExamReader(con), spec)
    check_booklet_areas(plan.forms)
    form = plan.forms[area]
    if not plan.units:
        raise ValueError(f"no {language} question text of booklet {form.booklet_id} ({year} "
                         f"{area}) in the store; import them first (enem-llm import-questions)")
    task = task_name(year, area, form.booklet_id, language, shots, n_shuffles, seed)
    documents = [document for unit in plan.units for document in unit_documents(
        task, unit, option_permutations(n_shuffles, seed, item_key=unit.item_id))]
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    documents_path = (output / f"{task}.jsonl").resolve()
    with open(documents_path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(document, ensure_ascii=False) + "\n"
                          for document in documents)
    config_path = output / f"{task}.yaml"
    config_path.write_text(task_config(task, documents_path), encoding="utf-8")
    return ExportedTask(task, config_path.resolve(), documents_path, len(documents),
                        len({unit.position for unit in plan.units}), form.n_items,
                        plan.skipped)


def task_name(year: int, area: str, booklet: int, language: str, shots: int, n_shuffles: int,
              seed: int) -> str:
    """``enem_llm_2023_mt_1234_pt_0shot_30x_seed0``: one name per set of settings, so two
    exports never overwrite each other's task."""
    return (f"enem_llm_{year}_{area.lower()}_{booklet}_{language}_{shots}shot_"
            f"{n_shuffles}x_seed{seed}")


def task_config(task: str, documents: Path) -> str:
    """The task's YAML. Every string is written as a JSON string, which YAML reads as is."""
    quoted = json.dumps
    letters = ", ".join(quoted(letter) for letter in OPTION_LETTERS)
    return "\n".join([
        "# Written by `enem-llm export-task`: one ENEM booklet, each item in several option",
        "# orders, with the project's exact prompts (docs/harness.md). The prompt ends in '(';",
        "# each choice is the letter alone, as the project's letter-prob method reads it.",
        f"task: {quoted(task)}",
        "dataset_path: json",
        "dataset_name: null",
        "dataset_kwargs:",
        "  data_files:",
        f"    test: {quoted(str(documents))}",
        "test_split: test",
        "output_type: multiple_choice",
        "doc_to_text: prompt",
        "doc_to_target: target",
        f"doc_to_choice: [{letters}]",
        'target_delimiter: ""',
        "num_fewshot: 0",
        "metric_list:",
        "  - metric: acc",
        "    aggregation: mean",
        "    higher_is_better: true",
        "metadata:",
        "  version: 1.0",
        "",
    ])
