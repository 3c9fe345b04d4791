"""Importing one file of the paper's key-position experiment as a run
(``inference.harness.key_position_file``; docs/harness.md).

Each of the file's 120 option orders becomes one shuffle of the run: its permutation is the
order itself (the option shown at each position), and the choice is the letter recorded,
which names the option because the options kept their letters. Where the key stood is then
read from the permutation exactly as for the project's own shuffles, so the Options and traps
page and ``enem-llm items --table key-position`` count correct answers by the key's position.
The items are placed on the file's booklet by their index in booklet order (in LC, the Spanish
form, the five English items not counted); a voided item (``V``) is skipped.
"""

from __future__ import annotations

from pathlib import Path

from inference.harness.choices import ReadAnswer
from inference.harness.key_position_file import (
    NO_LETTER,
    OPTION_ORDERS,
    KeyPositionFile,
    KeyPositionItem,
    read_key_position_file,
)
from inference.harness.records import HarnessFormatError
from workflows.harness.linking import (
    FOREIGN_LANGUAGE_ITEMS,
    RUN_LC_LANGUAGE,
    LinkCounts,
    Linker,
    Unlinked,
)
from workflows.harness.runs import HarnessRun, LinkedAnswer, store_harness_run
from workflows.harness.summary import HarnessImportSummary
from workflows.imported_runs import ResultsFormatError

#: How the run's options were shown, kept in its settings: reordered, each keeping its letter
#: (the project's own shuffles relabel them instead).
OPTION_DISPLAY = "reordered, letters kept"


def import_key_positions(con, path: Path, overrides: dict,
                         flags: list[tuple[str, int]]) -> HarnessImportSummary:
    """Link and store one key-position file as a run (see the module docstring);
    ResultsFormatError naming the row and column of a file that cannot be read, or when no
    answer links. ``flags`` are not used: the file names its booklet."""
    if flags:
        raise ValueError("--booklet does not apply to key-position files: each names its "
                         "booklet in ENEM_EXAM")
    try:
        data = read_key_position_file(path)
    except HarnessFormatError as error:
        raise ResultsFormatError(str(error)) from None
    linker, counts = Linker(con), LinkCounts()
    first_question = _first_question(data)
    linked: list[LinkedAnswer] = []
    for item in data.items:
        try:
            linked.extend(_answers(linker, data, item, first_question))
        except Unlinked as unlinked:
            counts.note(unlinked)
    settings = {"tool": "paper key-position experiment", "file": path.name,
                "temperature": data.temperature, "seed": data.seed,
                "options_shown": OPTION_DISPLAY, "orders": len(OPTION_ORDERS)}
    # One file per booklet: the booklet in the task keeps the four runs of one experiment
    # apart under readable labels.
    task = f"key-position {data.area} {data.booklet}"
    run = HarnessRun("paper", data.path, task, data.model, None, settings)
    return store_harness_run(con, run, linked, counts, linker, overrides)


def _first_question(data: KeyPositionFile) -> int:
    """The QUESTION of the form's first item: in LC the file leaves out the five English items
    that come first in booklet order, so its rows start at 5; 0 elsewhere."""
    lowest = min(item.question for item in data.items)
    return FOREIGN_LANGUAGE_ITEMS if data.area == "LC" and lowest >= FOREIGN_LANGUAGE_ITEMS else 0


def _answers(linker: Linker, data: KeyPositionFile, item: KeyPositionItem,
             first_question: int) -> list[LinkedAnswer]:
    """The item's 120 answers (Unlinked for a voided item or one the booklet lacks)."""
    if item.voided:
        raise Unlinked("voided item (pattern V)", skipped=True)
    language = RUN_LC_LANGUAGE if data.area == "LC" else None
    place = linker.on_form(data.year, data.booklet, language,
                           item.question - first_question + 1)
    if place.area != data.area:
        raise Unlinked(f"booklet {data.booklet} of {data.year} is no {data.area} booklet")
    answers = []
    for shuffle, (order, letter) in enumerate(zip(OPTION_ORDERS, item.pattern, strict=True)):
        index = None if letter == NO_LETTER else order.index(letter)
        answers.append(LinkedAnswer(place, shuffle, order, ReadAnswer(index, "letter"),
                                    data.language, None, item.key or None))
    return answers
