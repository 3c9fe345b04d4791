"""Simulated answers for adaptive testing: 3PL draws per (simulee, item) pair and guess/slip.

Every function works on pairs: ``theta`` of shape (n,) against ``items`` of shape (n,) (one item
index per simulee) or (n, t) (t items per simulee), never on a Python loop over simulees.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from analytics.irt import FloatArray, ItemBank, response_probabilities


def pair_probability(theta: ArrayLike, items: NDArray[np.intp], bank: ItemBank) -> FloatArray:
    """P of a correct answer for each (simulee, item) pair.

    Parameters
    ----------
    theta : array of shape (n,)
        One ability per simulee.
    items : int array of shape (n,) or (n, t)
        Bank indices; row i holds simulee i's items.
    bank : ItemBank
        Its items must be usable (finite a, b, c).

    Returns
    -------
    ndarray with the shape of ``items``
        P_j(θ_i) = c_j + (1 − c_j) / (1 + exp(−D·a_j·(θ_i − b_j))).
    """
    theta = np.asarray(theta, dtype=np.float64)
    items = np.asarray(items, dtype=np.intp)
    column = theta if items.ndim == 1 else theta[:, None]
    z = bank.scaling * bank.a[items] * (column - bank.b[items])
    return response_probabilities(z, bank.c[items]).p


def draw_answers(probability: FloatArray, uniforms: FloatArray) -> NDArray[np.bool_]:
    """Correct where ``probability ≥ uniform`` (catsim's convention), same shape as both."""
    return np.asarray(probability) >= np.asarray(uniforms)


def flip_labels(
    correct: NDArray[np.bool_], guess: float, slip: float, uniforms: FloatArray
) -> NDArray[np.bool_]:
    """Noisy labels: a wrong answer becomes correct with probability ``guess``, a correct one
    wrong with probability ``slip`` (the paper's careless or lucky student).

    ``uniforms`` are U(0, 1) draws of the shape of ``correct``; one draw decides each flip, so
    guess = slip = 0 returns ``correct`` unchanged whatever the draws.
    """
    for name, value in (("guess", guess), ("slip", slip)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be a probability in [0, 1]; got {value!r}")
    uniforms = np.asarray(uniforms)
    return np.where(correct, uniforms >= slip, uniforms < guess)
