"""The three ways a run reads a model's answer, and how a generated answer is parsed.

- ``letter-prob`` (the default, the paper's recipe): the next-token probabilities of the five
  letters after a prompt ending in ``(``; the most probable letter is the choice.
- ``full-answer-prob``: each displayed option is scored as the continuation the prompt asks
  for, ``"{letter}) {option text}"`` (:func:`continuation`), by the sum of its tokens'
  log-probabilities divided by their number; the highest mean wins.
- ``generate``: a completion is sampled (temperature T, one seed per item and shuffle) and the
  letter is read from its text with :data:`LETTER_PATTERNS`; a text matching none is
  *unparsed*, which is counted and kept, never taken for a letter.

Letter patterns, tried in order on the completion (the text generated after the prompt, whose
last characters are ``Answer: (``); the first that matches gives the letter:

1. the completion opens with the letter, as the prompt asks: optional spaces, one of A–E, then
   ``)``, ``.``, ``:``, a line break or nothing more (``B) …``, ``C``; not ``A resposta``,
   where "A" is the Portuguese article);
2. an answer label followed by the letter, in Portuguese or English: ``Resposta: (B)``,
   ``Answer: B``, ``alternativa correta é a C``, ``letra D``, ``option E``, ``the answer is
   (A)``, ``a resposta é B``;
3. a lone letter in parentheses anywhere: ``(D)``.

Matching is case-sensitive for the letter itself (a lower-case "a" is a Portuguese article,
not an answer).
"""

from __future__ import annotations

import re

from enem.areas import OPTION_LETTERS
from inference.shuffles import item_rng

ANSWER_METHODS: tuple[str, ...] = ("letter-prob", "full-answer-prob", "generate")
DEFAULT_ANSWER_METHOD = "letter-prob"
#: Backends that read an answer in any of the three ways (the others: letter-prob only).
ANSWER_METHOD_BACKENDS: tuple[str, ...] = ("transformers", "openai")
#: ``generate``'s default sampling temperature: *Beyond accuracy*'s (its published results
#: files give TEMPERATURE 0.6 for every run).
DEFAULT_TEMPERATURE = 0.6
#: The other seeds' temperatures, offered in help texts: PATCH samples multiple-choice answers
#: at 0.3 (0.6 for open answers); Khayyam decodes greedily, at 0.
PATCH_TEMPERATURE = 0.3
KHAYYAM_TEMPERATURE = 0.0
#: Where the temperature default comes from and what the other seeds use (``--help``, Runs page).
TEMPERATURE_SOURCES = (
    f"default {DEFAULT_TEMPERATURE:g}: Beyond accuracy's (TEMPERATURE {DEFAULT_TEMPERATURE:g} in "
    f"its published results); PATCH samples multiple choice at {PATCH_TEMPERATURE:g}, Khayyam "
    f"at {KHAYYAM_TEMPERATURE:g} (greedy): pass that value to follow them")
#: ``generate``'s tokens per answer: the project's own default (no seed fixes one; Khayyam
#: sets no limit), enough for a letter and a short phrase around it.
DEFAULT_MAX_NEW_TOKENS = 24
#: The parsed letter of a completion that matches no pattern.
UNPARSED = -1

_LETTER = f"([{OPTION_LETTERS}])"
_LABELS = (r"(?i:answer|resposta|alternativa|option|letra|op[cç][aã]o)"
           r"(?i:\s+(?:correta|correct|certa))?"
           r"(?i:\s+(?:is|é|e))?\s*:?\s*(?i:(?:a|the|letra)\s+)?")
#: (name, compiled pattern) in the order they are tried; group 1 is the letter.
LETTER_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("opening letter", re.compile(rf"^\s*{_LETTER}(?:[).:\n]|\s*$)")),
    ("answer label", re.compile(rf"{_LABELS}\(?{_LETTER}\b")),
    ("letter in parentheses", re.compile(rf"\({_LETTER}\)")),
)


def continuation(letter: str, option: str) -> str:
    """The text a prompt ending in ``(`` continues with when it answers ``letter``:
    ``"B) Carbon dioxide"`` (the option with its outer whitespace stripped, as displayed)."""
    return f"{letter}) {option.strip()}"


def parse_letter(text: str, reasoning: bool = False) -> int:
    """The letter index (0–4) a completion answers, or :data:`UNPARSED`.

    A ``reasoning`` completion (a chain-of-thought prompt) mentions options on its way and ends
    with its answer: the opening-letter pattern is skipped and the *last* match of the first
    pattern that matches at all gives the letter."""
    for name, pattern in LETTER_PATTERNS:
        if reasoning and name == "opening letter":
            continue
        found = list(pattern.finditer(text)) if reasoning else [pattern.search(text)]
        if found and found[-1]:
            return OPTION_LETTERS.index(found[-1].group(1))
    return UNPARSED


def sampling_seed(run_seed: int, key: str, shuffle: int) -> int:
    """The ``generate`` sampling seed of one shuffle of one request, drawn from (run seed,
    request key, shuffle): a run is reproducible and a resumed run draws the same answers."""
    return int(item_rng(run_seed, key, shuffle).integers(2**31 - 1))


def method_options(backend: str, method: str, temperature: float | None = None,
                   max_new_tokens: int | None = None) -> dict[str, object]:
    """The backend options a run's answer method adds: none for ``letter-prob`` (so its runs
    keep the ids they had before methods existed) or a backend of letter-prob only;
    ``answer_method``, and for ``generate`` the ``temperature`` and ``max_new_tokens`` given."""
    if backend not in ANSWER_METHOD_BACKENDS or check_method(method) == DEFAULT_ANSWER_METHOD:
        return {}
    sampling = {"temperature": temperature, "max_new_tokens": max_new_tokens}
    return {"answer_method": method, **{name: value for name, value in sampling.items()
                                        if method == "generate" and value is not None}}


def check_method(method: str) -> str:
    """``method`` if it is one of :data:`ANSWER_METHODS`, else ValueError naming them."""
    if method not in ANSWER_METHODS:
        raise ValueError(f"unknown answer method {method!r}; expected one of "
                         f"{', '.join(ANSWER_METHODS)}")
    return method
