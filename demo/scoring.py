"""Official ``NU_NOTA`` of the simulated answer sheets.

The recipe is INEP's as ``enem.scoring`` defines it for real years (EAP, D = 1, N(0, 1) prior,
40 points on [−4, 4], abandoned items dropped, ``nota = round(k·θ + d, 1)``, a test left entirely
blank gets 0.0; see docs/methods.md, ENEM conventions), so the demo's notas are what ingest
recomputes.
"""

from __future__ import annotations

import numpy as np

from demo.items import AreaBank
from demo.responses import BLANK
from enem.areas import OPTION_LETTERS
from enem.items import stored_item_bank
from enem.scoring import DEFAULT_OPTIONS, nota_only

# ASCII code of each option letter, indexed by the key's option number 0..4.
_LETTER_CODES = np.frombuffer(OPTION_LETTERS.encode("ascii"), dtype=np.uint8)


def official_nota(bank: AreaBank, answers: np.ndarray, lingua: np.ndarray) -> np.ndarray:
    """NU_NOTA of one area from canonical answers.

    Parameters
    ----------
    bank : AreaBank
    answers : uint8 array of shape (n, m)
        ASCII answer marks in the bank's canonical column order.
    lingua : int array of shape (n,)
        0 English, 1 Spanish; for LC each examinee is scored on the 45 items of their language.

    Returns
    -------
    float64 array of shape (n,)
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
        scored = (sub == _LETTER_CODES[bank.key[cols]][None, :]).astype(np.float64)
        item_bank = stored_item_bank({"a": bank.a[cols], "b": bank.b[cols], "c": bank.c[cols]},
                                     scaling=DEFAULT_OPTIONS.scaling)
        blank = np.all(sub == BLANK, axis=1)
        nota[rows] = nota_only(scored, item_bank, bank.area, blank=blank)
    return nota
