"""The record every tool reader produces, and the error a file that cannot be read raises."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class HarnessFormatError(ValueError):
    """A tool's file that cannot be read: the message names the file, the line or row and the
    field."""


@dataclass(frozen=True)
class ToolAnswer:
    """One answer a tool logged for one document.

    ``where``: ``line 12`` or ``row 12`` (1-based), for messages. ``doc``: the document as the
    tool logged it (its dataset's fields). ``choices``: the choice strings in the tool's order
    (the continuations scored, or the labels shown). ``loglikelihoods``: one per choice, same
    order, for log-likelihood tasks; None for generated answers. ``generated``: the raw text a
    generation task produced; ``extracted``: the tool's own extracted answer (lm-eval's filter
    output). ``query``: the prompt text, "" when the file holds none.
    """

    where: str
    doc: Mapping[str, Any]
    choices: tuple[str, ...] = ()
    loglikelihoods: tuple[float, ...] | None = None
    generated: str | None = None
    extracted: str | None = None
    query: str = ""


def number(value: Any, what: str) -> float:
    """``value`` (a number, or a number written as text as lm-eval writes them) as a float;
    HarnessFormatError naming ``what`` otherwise. -inf is a log-likelihood; NaN is not."""
    if isinstance(value, bool):
        raise HarnessFormatError(f"{what} is {value!r}, not a number")
    try:
        parsed = float(str(value).strip())
    except ValueError:
        raise HarnessFormatError(f"{what} is {str(value)[:40]!r}, not a number") from None
    if math.isnan(parsed):
        raise HarnessFormatError(f"{what} is NaN, not a number")
    return parsed


#: A tool's date stamp in its file names: ``datetime.now().isoformat()`` with ``:`` made ``-``.
DATE_STAMP = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"


def split_stamped_name(name: str, prefix: str, suffix: str) -> tuple[str, str | None]:
    """(task, date stamp) of ``<prefix>_<task>_<date><suffix>``; (the stem, None) when the
    name does not have that shape."""
    found = re.fullmatch(rf"{prefix}_(?P<task>.+)_(?P<date>{DATE_STAMP}){re.escape(suffix)}",
                         name)
    if found:
        return found.group("task"), found.group("date")
    return name.removesuffix(suffix).removeprefix(f"{prefix}_"), None
