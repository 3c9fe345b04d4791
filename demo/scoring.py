"""Official ``NU_NOTA`` of the simulated answer sheets, with the project's analytics package.

Recipe (REFERENCE.md §2): EAP, D = 1, N(0, 1) prior, 40 points on [−4, 4], abandoned items
dropped, ``nota = round(k·θ + d, 1)``; a test left entirely blank gets 0.0.
"""

from __future__ import annotations

import numpy as np

from analytics.ability import INEP_GRID, EAPEstimator
from analytics.irt import ItemBank
from analytics.scales import enem_nota
from demo.items import AreaBank
from demo.responses import BLANK


def official_nota(bank: AreaBank, answers: np.ndarray, lingua: np.ndarray) -> np.ndarray:
    """NU_NOTA (n,) float64 of one area from canonical answers (n, m) uint8 ASCII.

    For LC each examinee is scored on the 45 items of their language (``lingua`` (n,) 0/1).
    ``.`` and ``*`` count as wrong.
    """
    n = answers.shape[0]
    nota = np.full(n, np.nan)
    langs = (0, 1) if bank.area == "LC" else (0,)
    for lang in langs:
        rows = np.flatnonzero(lingua == lang) if bank.area == "LC" else np.arange(n)
        if rows.size == 0:
            continue
        cols = bank.form(lang)
        sub = answers[np.ix_(rows, cols)]
        keys = (ord("A") + bank.key[cols]).astype(np.uint8)
        scored = (sub == keys[None, :]).astype(np.float64)
        item_bank = ItemBank.from_arrays(bank.a[cols], bank.b[cols], bank.c[cols], scaling=1.0)
        theta = EAPEstimator(grid=INEP_GRID).estimate(scored, item_bank).theta
        blank = np.all(sub == BLANK, axis=1)
        nota[rows] = enem_nota(theta, bank.area, blank=blank)
    return nota
