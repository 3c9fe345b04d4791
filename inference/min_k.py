"""Min-K% Prob, the contamination probe (Shi et al., 2023; docs/methods.md, "Min-K% Prob").

For a text x_1..x_n tokenised as the model sees it, take the log-probabilities
log p(x_t | x_<t) of every token that has a context (all tokens after the first; when the
tokenizer prepends BOS, every text token), keep the lowest K% of them and average.
The number kept is ``max(1, floor(n_scored * K / 100))``: floor as in the original
implementation, but at least one token so short texts still get a value. Higher (closer to 0)
means the model finds even the text's least likely tokens likely: a sign it saw the text.
"""

from __future__ import annotations

import math

import numpy as np

DEFAULT_K_PERCENT = 20.0


def min_k_count(n_scored: int, k_percent: float = DEFAULT_K_PERCENT) -> int:
    """How many of ``n_scored`` token log-probs Min-K% averages."""
    if not 0 < k_percent <= 100:
        raise ValueError(f"k_percent must be in (0, 100], got {k_percent}")
    return max(1, math.floor(n_scored * k_percent / 100.0))


def min_k_from_logprobs(token_logprobs: np.ndarray, k_percent: float = DEFAULT_K_PERCENT) -> float:
    """Mean of the lowest K% of ``token_logprobs`` (n_scored,); NaN when there are none."""
    values = np.asarray(token_logprobs, dtype=np.float64).ravel()
    if values.size == 0:
        return float("nan")
    k = min_k_count(values.size, k_percent)
    return float(np.sort(values)[:k].mean())
