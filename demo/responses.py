"""Simulated answer sheets: 3PL correctness, distractor choice, aberrant styles, layout.

Answers are produced as ASCII codes in the area's *canonical* item order (see
:mod:`demo.items`): ``A``–``E``, ``.`` blank, ``*`` multiple marks. :func:`booklet_layout`
reorders them into the characters of ``TX_RESPOSTAS`` for each examinee's booklet.
"""

from __future__ import annotations

import numpy as np

from demo.items import AreaBank
from enem.areas import BLANK_MARK, MULTIPLE_MARK, OPTION_LETTERS, UNCHOSEN_MARK

BLANK = ord(BLANK_MARK)
MULTIPLE = ord(MULTIPLE_MARK)
UNCHOSEN = ord(UNCHOSEN_MARK)
A = ord(OPTION_LETTERS[0])
P_OMIT = 0.004
P_MULTIPLE = 0.003


def rank_in_booklet(bank: AreaBank, booklet: np.ndarray, lingua: np.ndarray) -> np.ndarray:
    """(n, m) index of each canonical item among the examinee's 45 characters; -1 if not taken."""
    table = np.full((bank.n_booklets, 2, len(bank.item_ids)), -1, dtype=np.int64)
    for j in range(bank.n_booklets):
        for lang in (0, 1):
            order = bank.char_order(j, lang)
            table[j, lang, order] = np.arange(len(order))
    return table[booklet, lingua]


def _wrong_choices(rng: np.random.Generator, weights: np.ndarray, n: int) -> np.ndarray:
    """(n, m) option index drawn from each item's distractor weights (m, 5) (never the key)."""
    cum = np.cumsum(weights, axis=1)
    u = rng.random((n, weights.shape[0])) * cum[:, -1]
    choice = np.zeros(u.shape, dtype=np.int64)
    for k in range(4):
        choice += u >= cum[:, k]
    return choice


def simulate_answers(
    rng: np.random.Generator,
    bank: AreaBank,
    theta: np.ndarray,
    booklet: np.ndarray,
    lingua: np.ndarray,
    aberrant: np.ndarray,
    blank: np.ndarray,
) -> np.ndarray:
    """Answers (n, m) uint8 ASCII in canonical order for one area.

    Args:
        theta: (n,) ability; booklet: (n,) booklet index; lingua: (n,) 0 en / 1 es;
        aberrant: (n,) 0 ordinary, 1 guesser, 2 careless stretch, 3 blanks at the end;
        blank: (n,) bool, test left entirely blank.
    Items outside the examinee's form (the other LC language) get answers too; the layout drops
    or masks them.
    """
    n, m = len(theta), len(bank.item_ids)
    p = bank.sim_c + (1 - bank.sim_c) / (1 + np.exp(-bank.sim_a * (theta[:, None] - bank.sim_b)))
    correct = rng.random((n, m)) < p
    choice = np.where(
        correct, bank.key.astype(np.int64), _wrong_choices(rng, bank.distractor_weights, n)
    )
    out = (A + choice).astype(np.uint8)
    noise = rng.random((n, m))
    out[noise < P_OMIT] = BLANK
    out[(noise >= P_OMIT) & (noise < P_OMIT + P_MULTIPLE)] = MULTIPLE

    random_letters = (A + rng.integers(0, 5, (n, m))).astype(np.uint8)
    rank = rank_in_booklet(bank, booklet, lingua)
    start = rng.integers(0, 35, n)[:, None]
    length = rng.integers(10, 26, n)[:, None]
    tail = rng.integers(5, 21, n)[:, None]
    guess = (aberrant == 1)[:, None]
    stretch = (aberrant == 2)[:, None] & (rank >= start) & (rank < start + length)
    out = np.where(guess | stretch, random_letters, out)
    end_blank = (aberrant == 3)[:, None] & (rank >= 45 - tail)
    out[end_blank | blank[:, None]] = BLANK
    return out


def booklet_layout(
    bank: AreaBank, answers: np.ndarray, booklet: np.ndarray, lingua: np.ndarray, fifty: bool
) -> np.ndarray:
    """Characters of ``TX_RESPOSTAS`` (n, L) uint8 in booklet order.

    L = 45, or 50 for LC when ``fifty`` (2014–2021): English block, Spanish block (the unchosen
    one filled with ``9``), then the 40 common items.
    """
    lc50 = fifty and bank.area == "LC"
    length = 50 if lc50 else 45
    order = np.zeros((bank.n_booklets, 2, length), dtype=np.int64)
    for j in range(bank.n_booklets):
        for lang in (0, 1):
            order[j, lang] = bank.char_order(j, lang, fifty=lc50)
    chars = np.take_along_axis(answers, order[booklet, lingua], axis=1)
    if lc50:
        chars[lingua == 1, 0:5] = UNCHOSEN
        chars[lingua == 0, 5:10] = UNCHOSEN
    return chars


def key_strings(bank: AreaBank, fifty: bool) -> np.ndarray:
    """(n_booklets, 2) object array of ``TX_GABARITO`` strings per booklet and language."""
    lc50 = fifty and bank.area == "LC"
    out = np.empty((bank.n_booklets, 2), dtype=object)
    for j in range(bank.n_booklets):
        for lang in (0, 1):
            out[j, lang] = bank.key_string(j, lang, fifty=lc50)
    return out
