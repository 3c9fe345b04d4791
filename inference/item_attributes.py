"""Item attributes read off an item's text: does it show an image, and does it use numbers?

Pure text analysis (no files, no store): :func:`derive_attributes` turns one item's statement
and five options into :class:`ItemAttributes`, the columns of the store's ``item_attributes``
table. The rules, precisely:

**has_image**: the printed item shows a non-text element (picture, map, chart, diagram, chemical
structure, or a table drawn as a figure) that the text stands in for. Question files mark it in
one of these ways, and only these count (the word "figura" in a sentence does not):

* a written description label, as in the paper's files and accessible booklets: Portuguese
  ``Descrição da imagem:``, ``Descrição do quadro:``, ``Descrição das estruturas químicas:``
  (``Descrição d…`` and a colon within a few words, same sentence); English
  ``Image description:``, ``Table description:``, ``Description of the table:``; Spanish
  ``Descripción de la imagen:``. The label starts with a capital letter, so prose such as "a
  descrição do cenário" is not one.
* maritaca-ai's ``[[placeholder]]`` (the image itself left out of the text).

**A number** is a run of decimal digits, with any digit-group or decimal separators inside it
(``7``, ``2 500``, ``1.000``, ``3,5``, ``1,794,272``, ``2014``, ``19th``, ``10%``), with these
exceptions, which are not numbers:

* digits glued to a word on their left: ``CO2``, ``H2O``, ``covid-19``, ``SARS-CoV-2`` (names and
  formulas, not quantities); a word on the right is a unit or an ordinal and still counts
  (``5km``, ``7am``, ``6º``).
* digits that label a part of the item right after a label word: ``TEXTO 1``, ``Texto 2``,
  ``textos 1 e 2``, ``Figura 1``, ``Quadro 3:``, ``Table 2``, ``Art. 6º``, ``Questão 12``
  (see ``_LABEL``). That is item numbering, not content.
* Roman numerals (``I``, ``II``, ``XX``) never count: in ENEM items they label texts and
  statements ("Texto I", "afirmativas I e III") or centuries, and the English pronoun "I" could
  not be told apart from them.
* numbers written as words ("dois", "three") do not count.

**numbers_in_statement**: the statement (stem, image descriptions included, since they describe
what is printed) holds at least one number. **numbers_in_options**: at least one of the five
options holds a number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: maritaca-ai's stand-in for an image left out of the text.
PLACEHOLDER = "[[placeholder]]"

# Description labels are capitalised labels ending in a colon within the same sentence; the
# bounded gap keeps "Descrição do esquema:" and rejects a colon three sentences later.
_DESCRIPTION = re.compile(
    r"(?:\bDescrição\s+d(?:a|o|as|os|e)\b"
    r"|\bDescription\s+of\b"
    r"|\bDescripción\s+de\b"
    r"|\b[A-Z][a-z]+\s+description\b)"
    r"[^:.!?\n]{0,80}:"
)

_ORDINAL = r"[ºª°]?"
# Label words whose following number (or list of numbers) names a part of the item.
_LABEL = re.compile(
    r"\b(?:textos?|texts?|figuras?|figures?|fig\.|quadros?|cuadros?|frames?|box(?:es)?"
    r"|tabelas?|tablas?|tables?|gr[aá]ficos?|graphs?|charts?|esquemas?|diagrams?"
    r"|imagem|imagens|images?|art\.|arts\.|artigos?|articles?|art[ií]culos?"
    r"|quest(?:ão|ões)|questions?|preguntas?|itens|items?|afirmativas?|afirmaç(?:ão|ões)"
    r"|statements?|alternativas?|options?)"
    # A list after a label needs its conjunction ("textos 1, 2 e 3"): "Table 4, 12 people"
    # labels only the 4.
    rf"\s*(?:\d+{_ORDINAL}(?:\s*,\s*\d+{_ORDINAL})*\s*(?:\be|\by|\band|\bou|\bor|&)\s*"
    rf"\d+{_ORDINAL}|\d+{_ORDINAL})",
    re.IGNORECASE,
)
# Digits with thousands groups and a decimal part; not preceded by a letter, a digit, or a
# letter and hyphen (word-glued digits are names and formulas: CO2, covid-19).
_NUMBER = re.compile(r"(?<![^\W_])(?<![^\W\d_]-)\d+(?:[ .,\u00a0]\d{3}(?!\d))*(?:[.,]\d+)?")


@dataclass(frozen=True)
class ItemAttributes:
    """What an item's text shows: the ``item_attributes`` columns (see the module's rules)."""

    has_image: bool
    numbers_in_statement: bool
    numbers_in_options: bool


def has_image(text: str) -> bool:
    """True when ``text`` marks an image: a written description label or a ``[[placeholder]]``."""
    return PLACEHOLDER in text or _DESCRIPTION.search(text) is not None


def numbers_in(text: str) -> list[str]:
    """The numbers of ``text`` as the module defines them (labels removed first), in order."""
    unlabelled = _LABEL.sub(" ", text)
    return [match.group(0) for match in _NUMBER.finditer(unlabelled)]


def has_numbers(text: str) -> bool:
    """True when ``text`` holds at least one number (see :func:`numbers_in`)."""
    return bool(numbers_in(text))


def derive_attributes(stem: str, options: Sequence[str]) -> ItemAttributes:
    """The attributes of one item from its statement and its options."""
    return ItemAttributes(
        has_image=has_image(stem) or any(has_image(option) for option in options),
        numbers_in_statement=has_numbers(stem),
        numbers_in_options=any(has_numbers(option) for option in options),
    )
