"""Per booklet form: candidates at each summed score and, per item, how many of them were right.

These are the data of item fit by summed score (Orlando–Thissen S-X², ``analytics.items.fit``)
and of Mantel–Haenszel DIF, which both condition on the number correct of one fixed form, so
they cannot pool booklets as ``enem.item_statistics`` does: one block of rows per form
(booklet, LC language), stored as ``item_score_counts``.

Which items count: those the ingest's CTT score counts, the form's items with parameters
(``BookletForm.bank.usable``). Abandoned and annulled items (no parameters, or key ``X``) are
in neither the score nor the rows, so a form of k counted items has scores 0 … k and its
tables have the shapes ``analytics.items.fit.score_tables`` returns. Blank (``.``) and multiple
(``*``) marks are wrong.

Which candidates count: the form's scored candidates (present, string usable) except the
all-blank tests, which carry no answer: they would only add to the count at score 0, where
S-X² looks at nothing and a Mantel–Haenszel stratum adds nothing. (``item_stats`` and the
other pooled tables do count them, every item answered ``.``; they are the only difference.)

Each form's character matrices are read once more here, ``chunk_rows`` candidates at a time, in
the form's own item order: the pooled pass of ``enem.item_statistics`` stacks the forms of a
population in shared columns, so the per-form scores are not at hand there.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from enem.item_statistics import CHUNK_ROWS
from enem.items import BookletForm
from enem.responses import blank_rows
from enem.score_batches import AreaAccumulator

#: Columns of ``item_score_counts`` (``store.schema``), in order.
COLUMNS = ("year", "area", "booklet_id", "item_language", "item_id", "position", "score", "n",
           "correct")


def area_score_frame(year: int, area: str, forms: dict[tuple[int, int | None], BookletForm],
                     accumulator: AreaAccumulator, chunk_rows: int = CHUNK_ROWS
                     ) -> pd.DataFrame | None:
    """``item_score_counts`` rows of one area: a block per form its candidates answered, in
    (booklet, language) order; None when no form has candidates.

    ``forms`` maps each key of ``accumulator.chars`` to its form (``ItemsTable.forms``).
    """
    keys = sorted(accumulator.chars, key=lambda key: (key[0], -1 if key[1] is None else key[1]))
    blocks = [form_score_frame(year, area, forms[key], accumulator.chars[key], chunk_rows)
              for key in keys]
    blocks = [block for block in blocks if len(block)]
    return pd.concat(blocks, ignore_index=True) if blocks else None


def form_score_frame(year: int, area: str, form: BookletForm, pieces: Iterable[np.ndarray],
                     chunk_rows: int) -> pd.DataFrame:
    """The rows of one form: one per (counted item, score held by some candidate).

    ``pieces``: the form's (n, form.n_items) uint8 character matrices, in string order.
    Scores no candidate holds have no rows (n > 0 on every row).
    """
    counted = form.bank.usable
    score_counts, correct_by_score = form_score_counts(pieces, form.keys, counted, chunk_rows)
    n_items = correct_by_score.shape[0]
    held = np.flatnonzero(score_counts > 0)
    positions = np.flatnonzero(counted) + 1  # 1-based places in the answer string
    return pd.DataFrame({
        "year": year, "area": area, "booklet_id": form.booklet_id,
        # Int16 with NA: outside LC the form has no language (NULL), as in ``scores``.
        "item_language": pd.array([form.language] * (n_items * len(held)), dtype="Int16"),
        "item_id": np.repeat(form.item_ids[counted], len(held)),
        "position": np.repeat(positions, len(held)).astype(np.int16),
        "score": np.tile(held, n_items).astype(np.int16),
        "n": np.tile(score_counts[held], n_items),
        "correct": correct_by_score[:, held].reshape(-1),
    }, columns=list(COLUMNS))


def form_score_counts(pieces: Iterable[np.ndarray], keys: np.ndarray, counted: np.ndarray,
                      chunk_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts by number correct over the non-blank candidates of one form.

    Parameters
    ----------
    pieces : iterable of (n, n_form_items) uint8 arrays
        Marks (ASCII codes of A–E, ``.``, ``*``) in string order.
    keys : (n_form_items,) uint8
        ASCII codes of the keys; those of counted items are letters A–E.
    counted : (n_form_items,) bool
        The items the score counts (k of them).
    chunk_rows : int
        Candidates handled at a time (at most 2**24): bounds the temporaries to a few MB
        whatever the form's size.

    Returns
    -------
    score_counts : (k + 1,) int64
        Candidates at each score s = 0 … k.
    correct_by_score : (k, k + 1) int64
        Entry [i, s]: those of score s right on the i-th counted item.
    """
    if not 0 < chunk_rows <= _FLOAT32_EXACT:
        raise ValueError(f"chunk_rows must be in 1 … {_FLOAT32_EXACT}; got {chunk_rows}")
    counted_keys = keys[counted]
    n_items = int(counted.sum())
    whole = bool(counted.all())
    score_counts = np.zeros(n_items + 1, np.int64)
    correct_by_score = np.zeros((n_items, n_items + 1), np.int64)
    for piece in pieces:
        for start in range(0, len(piece), chunk_rows):
            block = piece[start:start + chunk_rows]
            correct = (block if whole else block[:, counted]) == counted_keys
            scores = correct.sum(axis=1, dtype=np.intp)
            score_counts += np.bincount(scores, minlength=n_items + 1)
            # An all-blank test scores 0 (no key is '.'): only those rows need a look.
            at_zero = np.flatnonzero(scores == 0)
            score_counts[0] -= int(blank_rows(block[at_zero]).sum())
            # One product per chunk: correct (m, k) against the one-hot of the scores (m, k+1).
            # Blank tests have no right answer, so they add nothing here. The counts are
            # integers ≤ chunk_rows, exact in float32; a product is ~4× cheaper than a bincount
            # over every (score, item) cell of the chunk.
            one_hot = np.zeros((len(block), n_items + 1), np.float32)
            one_hot[np.arange(len(block)), scores] = 1.0
            correct_by_score += (correct.T.astype(np.float32) @ one_hot).astype(np.int64)
    return score_counts, correct_by_score


#: Integers up to this are exact in float32 (its 24-bit significand).
_FLOAT32_EXACT = 2**24
