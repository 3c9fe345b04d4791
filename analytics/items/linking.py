"""Linking two calibrations of the same items onto one θ scale.

A calibration fixes its scale by its own population (θ ~ N(0, 1) there), so the same items
calibrated on language models and by INEP on human examinees carry parameters on two scales that
differ by a linear map θ_to = A·θ_from + B. Under it the item curves stay the same when

    a_to = a_from / A,    b_to = A·b_from + B,    c_to = c_from.

Two classical estimates of (A, B) from the items both calibrations share (Kolen & Brennan 2014,
Test Equating, Scaling, and Linking, ch. 6):

* mean/sigma (Marco 1977): match the mean and SD of the difficulties;
* Stocking & Lord (1983): minimise the weighted squared difference between the test
  characteristic curves Σ_i P_i(θ) of the target bank and of the transformed source bank, over θ
  points on the target scale. It uses a, b and c together, so it is less sensitive to a few
  badly estimated difficulties.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize
from scipy.special import expit

from analytics.irt import FloatArray, ItemBank


def transform(bank: ItemBank, slope: float, intercept: float) -> ItemBank:
    """The bank on the scale θ_to = A·θ + B: a/A, A·b + B, c unchanged (same D).

    Parameters
    ----------
    bank : ItemBank
    slope, intercept : float
        A (> 0) and B.

    Raises
    ------
    ValueError
        If A is not finite and positive or B is not finite.
    """
    _check_constants(slope, intercept)
    return ItemBank(bank.a / slope, slope * bank.b + intercept, bank.c, bank.scaling)


def mean_sigma(b_from: ArrayLike, b_to: ArrayLike) -> tuple[float, float]:
    """Mean/sigma linking constants from two sets of difficulties of the same items.

    Parameters
    ----------
    b_from, b_to : arrays of shape (n_items,)
        Difficulties of the same items on the source and the target scale; items with a NaN in
        either are left out.

    Returns
    -------
    (A, B) : (float, float)
        A = SD(b_to)/SD(b_from), B = mean(b_to) − A·mean(b_from), so that b_to ≈ A·b_from + B
        (and a_to = a_from / A).

    Raises
    ------
    ValueError
        If the arrays differ in shape, fewer than two items are shared, or the source
        difficulties do not vary.
    """
    source = np.asarray(b_from, dtype=np.float64)
    target = np.asarray(b_to, dtype=np.float64)
    if source.shape != target.shape or source.ndim != 1:
        raise ValueError(f"b_from and b_to must be 1-D of one shape; got {source.shape}, "
                         f"{target.shape}")
    shared = np.isfinite(source) & np.isfinite(target)
    if shared.sum() < 2:
        raise ValueError("mean/sigma needs at least two items with difficulties on both scales")
    source, target = source[shared], target[shared]
    spread = source.std()
    if spread == 0.0:
        raise ValueError("the source difficulties do not vary: no scale to link")
    slope = float(target.std() / spread)
    return slope, float(target.mean() - slope * source.mean())


DEFAULT_LINKING_POINTS = np.linspace(-4.0, 4.0, 41)
"""θ points (target scale) of the Stocking–Lord criterion when none are given."""


def stocking_lord(
    bank_from: ItemBank,
    bank_to: ItemBank,
    theta_points: ArrayLike | None = None,
    weights: ArrayLike | None = None,
) -> tuple[float, float]:
    """Stocking–Lord linking constants: the (A, B) whose transformed source bank has the test
    characteristic curve closest to the target's.

    Minimises F(A, B) = Σ_q w_q [Σ_i P_i^to(θ_q) − Σ_i P_i^from*(θ_q)]², where from* is
    ``transform(bank_from, A, B)``, over the items usable in both banks, with the analytic
    gradient (BFGS), starting from the mean/sigma constants.

    Parameters
    ----------
    bank_from, bank_to : ItemBank
        The same items (same order and number) on the source and the target scale. Each bank
        keeps its own D.
    theta_points : array of shape (n_points,), optional
        θ on the target scale; default ``DEFAULT_LINKING_POINTS`` (41 points on [−4, 4]).
    weights : array of shape (n_points,), optional
        Non-negative weights of the points; default the N(0, 1) density at them (the target
        population), normalised.

    Returns
    -------
    (A, B) : (float, float)
        θ_to = A·θ_from + B; apply with ``transform(bank_from, A, B)``.

    Raises
    ------
    ValueError
        If the banks differ in length, fewer than two items are usable in both, or the points
        and weights do not match.
    """
    if bank_from.n_items != bank_to.n_items:
        raise ValueError(f"the banks must hold the same items; got {bank_from.n_items} and "
                         f"{bank_to.n_items}")
    shared = bank_from.usable & bank_to.usable
    if shared.sum() < 2:
        raise ValueError("Stocking–Lord needs at least two items with parameters in both banks")
    source, target = bank_from.subset(shared), bank_to.subset(shared)
    points = (DEFAULT_LINKING_POINTS if theta_points is None
              else np.asarray(theta_points, dtype=np.float64))
    if weights is None:
        weight = np.exp(-0.5 * points**2)
    else:
        weight = np.asarray(weights, dtype=np.float64)
    if points.ndim != 1 or weight.shape != points.shape:
        raise ValueError("theta_points and weights must be 1-D arrays of one length")
    if not (np.all(np.isfinite(points)) and np.all(np.isfinite(weight)) and np.all(weight >= 0)
            and weight.sum() > 0):
        raise ValueError("theta_points must be finite and weights finite, non-negative, not all 0")
    weight = weight / weight.sum()
    target_curve = _curve_terms(target, points, 1.0, 0.0)[0].sum(axis=1)

    def loss(constants: FloatArray) -> tuple[float, FloatArray]:
        slope, intercept = constants
        probability, derivative = _curve_terms(source, points, slope, intercept)
        gap = target_curve - probability.sum(axis=1)
        # z = D·a·((θ − B)/A − b): dz/dA = −D·a·(θ − B)/A², dz/dB = −D·a/A.
        d_slope = derivative * (-(source.scaling * source.a) * (points[:, None] - intercept)
                                / slope**2)
        d_intercept = derivative * (-(source.scaling * source.a) / slope)
        gradient = np.array([-2.0 * np.sum(weight * gap * d_slope.sum(axis=1)),
                             -2.0 * np.sum(weight * gap * d_intercept.sum(axis=1))])
        return float(np.sum(weight * gap**2)), gradient

    try:
        start = np.array(mean_sigma(source.b, target.b))
    except ValueError:
        start = np.array([1.0, 0.0])
    if not (np.all(np.isfinite(start)) and start[0] > 0.0):
        start = np.array([1.0, 0.0])
    result = minimize(loss, start, jac=True, method="BFGS", options={"gtol": 1e-12})
    slope, intercept = (float(v) for v in result.x)
    return slope, intercept


def _curve_terms(
    bank: ItemBank, points: FloatArray, slope: float, intercept: float
) -> tuple[FloatArray, FloatArray]:
    """P of ``transform(bank, A, B)`` at ``points`` and dP/dz, each (n_points, n_items)."""
    z = bank.scaling * bank.a * ((points[:, None] - intercept) / slope - bank.b)
    s = expit(z)
    return bank.c + (1.0 - bank.c) * s, (1.0 - bank.c) * s * (1.0 - s)


def _check_constants(slope: float, intercept: float) -> None:
    if not (np.isfinite(slope) and slope > 0.0 and np.isfinite(intercept)):
        raise ValueError(f"A must be finite and positive and B finite; got A={slope!r}, "
                         f"B={intercept!r}")
