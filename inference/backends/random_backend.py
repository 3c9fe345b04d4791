"""The paper's random baseline: a uniformly random letter per item and shuffle.

The draw for shuffle ``s`` of a request depends only on (scorer seed, request seed, request key,
s), so it is reproducible and independent of batching or resume order. ``probs`` is one-hot on
the drawn letter (so ``choice == argmax(probs)`` like every backend); ``letter_mass`` is NaN
(there is no model distribution).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from inference.backends.base import ItemScores, LetterScores, ScoreRequest
from inference.shuffles import item_rng


class RandomScorer:
    """Uniform random choice among the five letters."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = int(seed)

    def __repr__(self) -> str:
        return f"RandomScorer(seed={self.seed})"

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "seed": self.seed, "probs": "one-hot"}

    def score(self, requests: Sequence[ScoreRequest]) -> LetterScores:
        out = []
        for req in requests:
            choice = np.array(
                [
                    item_rng(self.seed, req.key, int(req.seed), s).integers(5)
                    for s in range(req.n_shuffles)
                ],
                dtype=np.int64,
            )
            probs = np.zeros((req.n_shuffles, 5))
            probs[np.arange(req.n_shuffles), choice] = 1.0
            out.append(ItemScores(req.key, probs, np.full(req.n_shuffles, np.nan), choice))
        return out
