"""Reporting scales: θ to the ENEM nota and to the paper's 100·θ + 500 scale."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from analytics.irt import FloatArray

# INEP's linear transformation θ → nota per area, (k, d) in nota = k·θ + d (stable 2020–2024).
ENEM_SCALE: dict[str, tuple[float, float]] = {
    "CH": (112.310, 501.489),
    "CN": (113.102, 501.144),
    "LC": (108.086, 499.978),
    "MT": (129.646, 500.020),
}


def enem_nota(theta: ArrayLike, area: str, blank: ArrayLike | None = None) -> FloatArray:
    """Official ENEM nota: round(k·θ + d, 1) with the area's constants.

    Parameters
    ----------
    theta : array of shape (n,)
        EAP θ (INEP grid, D = 1, N(0, 1) prior).
    area : {"CH", "CN", "LC", "MT"}
    blank : bool array of shape (n,), optional
        True for a test left entirely blank; its nota is 0.0 whatever θ is.

    Returns
    -------
    ndarray of shape (n,)
        Nota rounded to one decimal with ``np.round`` (round half to even on the binary value).

    Raises
    ------
    ValueError
        If ``area`` is not one of the four ENEM areas.
    """
    if area not in ENEM_SCALE:
        raise ValueError(f"unknown ENEM area {area!r}; expected one of {', '.join(ENEM_SCALE)}")
    slope, intercept = ENEM_SCALE[area]
    nota = np.round(slope * np.asarray(theta, dtype=np.float64) + intercept, 1)
    if blank is not None:
        nota = np.where(np.asarray(blank, dtype=bool), 0.0, nota)
    return nota


def paper_scale(theta: ArrayLike) -> FloatArray:
    """The paper's reporting scale 100·θ + 500 (unrounded), same shape as ``theta``."""
    return 100.0 * np.asarray(theta, dtype=np.float64) + 500.0
