"""Shared pieces of the demo question templates: the draft type and number formatting.

A template returns a :class:`Draft`: the stem, the correct option and four wrong options in
Portuguese and English (the wrong options in the same order in both languages). Arithmetic
templates compute the answer from their parameters, kept in ``Draft.params``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

LANGS: tuple[str, str] = ("pt", "en")

T = TypeVar("T")


@dataclass(frozen=True)
class Draft:
    """One question before the options are placed: ``stem``/``correct`` per language, ``wrong``
    per language (4 strings, same order in both languages)."""

    template: str
    params: dict[str, object]
    stem: dict[str, str]
    correct: dict[str, str]
    wrong: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Template:
    """A question template; ``table_size`` is the number of fact rows (None = computed,
    unlimited)."""

    name: str
    make: Callable[[np.random.Generator, int], Draft]
    table_size: int | None = None
    weight: float = field(default=1.0)


# ----------------------------------------------------------------------------- formatting
def num(x: float, lang: str, decimals: int = 2) -> str:
    """Number with at most ``decimals`` decimals, trailing zeros dropped, thousands grouped:
    pt "1.234,5", en "1,234.5"."""
    text = f"{abs(x):,.{decimals}f}"
    if decimals:
        text = text.rstrip("0").rstrip(".")
    if text in ("0", ""):
        return "0"
    if lang == "pt":
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    return ("-" if x < 0 else "") + text


def money(x: float, lang: str) -> str:
    """Amount in reais with 2 decimals: pt "R$ 1.234,50", en "R$ 1,234.50"."""
    text = f"{x:,.2f}"
    if lang == "pt":
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    return "R$ " + text


def parse_num(text: str, lang: str = "pt") -> float:
    """Inverse of :func:`num` / :func:`money` for the leading number of an option."""
    token = text.replace("R$ ", "").split(" ")[0]
    if lang == "pt":
        token = token.replace(".", "").replace(",", ".")
    else:
        token = token.replace(",", "")
    return float(token)


def roman(n: int) -> str:
    out = ""
    for value, sym in (
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ):
        while n >= value:
            out += sym
            n -= value
    return out


def ordinal_en(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def join_list(values: Sequence[str], lang: str) -> str:
    return ", ".join(values[:-1]) + (" e " if lang == "pt" else " and ") + values[-1]


def numeric_draft(
    template: str,
    params: dict[str, object],
    stem: dict[str, str],
    correct: float,
    wrong: Sequence[float],
    render: Callable[[float, str], str],
    positive: bool = True,
) -> Draft:
    """Draft whose options are numbers: keeps the first 4 wrong values that render differently
    from the answer and from each other (> 0 when ``positive``), topping up with answer × (1 ±
    0.2k)."""
    seen = {render(correct, "en")}
    chosen: list[float] = []
    fallback = [correct * (1 + s * 0.2 * k) for k in range(1, 30) for s in (1, -1)]
    for value in list(wrong) + fallback:
        text = render(value, "en")
        if (value > 0 or not positive) and text not in seen:
            seen.add(text)
            chosen.append(value)
        if len(chosen) == 4:
            break
    if len(chosen) < 4:
        raise ValueError(f"{template}: could not find four distinct wrong options")
    return Draft(
        template=template,
        params=params,
        stem=stem,
        correct={lang: render(correct, lang) for lang in LANGS},
        wrong={lang: tuple(render(v, lang) for v in chosen) for lang in LANGS},
    )


def unit(
    suffix_pt: str, suffix_en: str | None = None, decimals: int = 2
) -> Callable[[float, str], str]:
    """Renderer "number + unit" (the unit may differ by language)."""

    def render(x: float, lang: str) -> str:
        return f"{num(x, lang, decimals)} {suffix_pt if lang == 'pt' else (suffix_en or suffix_pt)}"

    return render


def pick(rng: np.random.Generator, values: Sequence[T]) -> T:
    """One of ``values``, drawn uniformly with ``rng`` (typed as the sequence's items)."""
    return values[int(rng.integers(len(values)))]


def fact_draft(
    template: str,
    params: dict[str, object],
    stem: dict[str, str],
    pt: Sequence[str],
    en: Sequence[str],
) -> Draft:
    """Draft from option lists given as [correct, wrong × 4] per language."""
    return Draft(
        template,
        params,
        stem,
        {"pt": pt[0], "en": en[0]},
        {"pt": tuple(pt[1:5]), "en": tuple(en[1:5])},
    )


def other_rows(
    rng: np.random.Generator, n_rows: int, row: int, k: int = 4, prefer: Sequence[int] = ()
) -> list[int]:
    """k row indices other than ``row``: those in ``prefer`` first, then random ones."""
    pool = [i for i in prefer if i != row]
    rest = [int(i) for i in rng.permutation(n_rows) if i != row and i not in pool]
    pool = [int(i) for i in rng.permutation(pool)] if pool else []
    return (pool + rest)[:k]
