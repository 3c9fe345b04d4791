"""Min-K% Prob, the contamination probe (Shi et al., 2023; docs/methods.md, "Min-K% Prob").

As *Beyond accuracy*'s Eq. 4 and the implementation it cites: for a text x_1..x_n tokenised as
the model sees it, take the log-probabilities log p(x_t | x_<t) of every token that has a
context (all tokens after the first; when the tokenizer prepends BOS, every text token), keep
the E lowest (the lowest K%) and return their **negated** mean,

    MIN-K% PROB(x) = −(1/E) Σ log p(x_i),

a value ≥ 0. E is ``max(1, floor(n_scored * K / 100))``: floor as in the original
implementation, but at least one token so short texts still get a value. **Lower** means the
model finds even the text's least likely tokens likely: a sign it may have *seen* the text.
The paper reads a negative correlation between accuracy and Min-K% as evidence of
contamination.

Values computed before this module negated the mean (the mean itself, ≤ 0) have the same
magnitude: :func:`signed_as_eq4` brings them to this sign.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

DEFAULT_K_PERCENT = 20.0
#: Which way of the scale suggests the model saw the text (for captions and tables).
SEEN_DIRECTION = ("lower Min-K% = the text's least likely tokens are likely to the model, as "
                  "for a text it may have seen; the paper reads a negative r between accuracy "
                  "and Min-K% as evidence of contamination")


def min_k_count(n_scored: int, k_percent: float = DEFAULT_K_PERCENT) -> int:
    """How many of ``n_scored`` token log-probs Min-K% averages."""
    if not 0 < k_percent <= 100:
        raise ValueError(f"k_percent must be in (0, 100], got {k_percent}")
    return max(1, math.floor(n_scored * k_percent / 100.0))


def min_k_from_logprobs(token_logprobs: np.ndarray, k_percent: float = DEFAULT_K_PERCENT) -> float:
    """MIN-K% PROB: minus the mean of the lowest K% of ``token_logprobs`` (n_scored,), ≥ 0;
    NaN when there are none."""
    values = np.asarray(token_logprobs, dtype=np.float64).ravel()
    if values.size == 0:
        return float("nan")
    k = min_k_count(values.size, k_percent)
    return float(-np.sort(values)[:k].mean()) + 0.0


def signed_as_eq4(values: pd.Series) -> pd.Series:
    """Min-K% values in Eq. 4's sign, from values that may hold the mean without the minus
    (a run folder written before the sign was fixed): those are ≤ 0 and Eq. 4's are ≥ 0, so
    a negative value is an older one and is negated; NaN stays NaN."""
    return values.where(~(values < 0), -values)
