"""How consistently a model answers one item across repetitions (seeds, option shuffles,
samples at a temperature): the CAT seed's "fickle-minded" check, on plain numpy arrays.

The input is a matrix of choices, one row per item and one column per repetition, each cell
the option chosen (its original letter, so shuffles compare) or an empty string where the
repetition gave no choice. Per item:

- ``modal_share``: the share of the repetitions that chose the most frequent option
  (1 = the same answer every time; 1/k at worst with k options in use);
- ``entropy``: the Shannon entropy of the choices in bits, −Σ p_o log₂ p_o (0 = always the
  same option; log₂ 5 ≈ 2.32 at most with five options);
- ``changed``: whether two repetitions chose differently.

Empty cells are left out of an item's counts; an item with no choice at all has NaN shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from analytics.irt import FloatArray


@dataclass(frozen=True, eq=False)
class ItemConsistency:
    """Per item (shape (n_items,) each): choices counted, modal share, entropy (bits), whether
    the choices differ, and the most frequent choice ('' for an item with none; the first in
    sorted order on a tie)."""

    answered: np.ndarray
    modal_share: FloatArray
    entropy: FloatArray
    changed: np.ndarray
    modal_choice: np.ndarray


def item_consistency(choices: ArrayLike) -> ItemConsistency:
    """Consistency of each row of ``choices`` (shape (n_items, n_repetitions), option labels
    as strings; '' = no choice)."""
    choices = np.asarray(choices, dtype=str)
    if choices.ndim != 2:
        raise ValueError(f"choices must be items × repetitions, got shape {choices.shape}")
    n_items = choices.shape[0]
    answered = np.zeros(n_items, dtype=np.int64)
    modal = np.full(n_items, np.nan)
    entropy = np.full(n_items, np.nan)
    changed = np.zeros(n_items, dtype=bool)
    modal_choice = np.full(n_items, "", dtype=object)
    for index, row in enumerate(choices):
        given = row[row != ""]
        if given.size == 0:
            continue
        options, counts = np.unique(given, return_counts=True)
        shares = counts / given.size
        answered[index] = given.size
        modal[index] = shares.max()
        modal_choice[index] = str(options[int(np.argmax(counts))])
        entropy[index] = float(-(shares * np.log2(shares)).sum()) + 0.0  # no −0.0
        changed[index] = counts.size > 1
    return ItemConsistency(answered, modal, entropy, changed, modal_choice)


@dataclass(frozen=True)
class RunConsistency:
    """Over a run's items with at least two choices: how many, the mean modal share, the mean
    entropy (bits) and the share of items answered differently at least once."""

    items: int
    mean_modal_share: float
    mean_entropy: float
    share_changed: float


def run_consistency(items: ItemConsistency) -> RunConsistency:
    """Summarise :func:`item_consistency` over the items with two or more choices (an item
    answered once cannot show a change)."""
    keep = items.answered >= 2
    if not keep.any():
        return RunConsistency(0, np.nan, np.nan, np.nan)
    return RunConsistency(int(keep.sum()), float(items.modal_share[keep].mean()),
                          float(items.entropy[keep].mean()),
                          float(items.changed[keep].mean()))
