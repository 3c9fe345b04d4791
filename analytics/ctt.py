"""Classical test theory: number correct, item p-values, point-biserials, discrimination index.

Responses are (n_examinees, n_items) floats: 1.0 correct, 0.0 wrong, NaN missing. These
functions know nothing about item parameters: every finite entry counts. (``scoring`` drops items
without parameters before calling them.)
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from analytics.irt import FloatArray

#: Share of examinees in each of the bottom and top groups of the upper-lower discrimination
#: index (the top 25% minus the bottom 25%, as the paper ranks them by θ): the one default of
#: every DI in the project, humans' items and models' alike.
DISCRIMINATION_GROUP_FRACTION = 0.25


def _matrix(responses: ArrayLike) -> FloatArray:
    matrix = np.asarray(responses, dtype=np.float64)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.ndim != 2:
        raise ValueError(f"responses must be (n_examinees, n_items); got shape {matrix.shape}")
    return matrix


def ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """numerator / denominator elementwise, NaN where the denominator is not positive."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def ctt_score(responses: ArrayLike) -> FloatArray:
    """Number correct per examinee, shape (n_examinees,), float; NaN entries are ignored."""
    return np.nansum(_matrix(responses), axis=1)


def proportion_correct(responses: ArrayLike) -> FloatArray:
    """Number correct / number of finite entries, shape (n_examinees,); NaN with no entry."""
    matrix = _matrix(responses)
    return ratio(np.nansum(matrix, axis=1), np.isfinite(matrix).sum(axis=1))


def item_p_values(responses: ArrayLike) -> FloatArray:
    """Proportion correct per item over its finite entries, shape (n_items,); NaN with none."""
    matrix = _matrix(responses)
    finite = np.isfinite(matrix)
    if finite.all():  # the usual case; skips nansum's masked copy of the whole matrix
        return ratio(matrix.sum(axis=0), np.full(matrix.shape[1], float(matrix.shape[0])))
    return ratio(np.where(finite, matrix, 0.0).sum(axis=0), finite.sum(axis=0))


def point_biserial(
    responses: ArrayLike,
    total: ArrayLike | None = None,
    corrected: bool = True,
) -> FloatArray:
    """Pearson correlation between each item and a total score.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN.
    total : array of shape (n_examinees,), optional
        The criterion; defaults to :func:`ctt_score` (number correct).
    corrected : bool, default True
        Subtract the item's own response from the total before correlating (the item-rest
        correlation), so an item is not correlated with itself. Meaningful when ``total`` is a
        sum that includes the item, as the default is.

    Returns
    -------
    ndarray of shape (n_items,)
        For item j, the correlation over examinees with a finite response to j (and a finite
        total). NaN where the item or the total has zero variance among them.
    """
    matrix = _matrix(responses)
    total = ctt_score(matrix) if total is None else np.asarray(total, dtype=np.float64)
    if total.shape != (matrix.shape[0],):
        raise ValueError(f"total must have shape ({matrix.shape[0]},); got {total.shape}")
    finite_total = np.isfinite(total)
    # Centring the total once keeps the moment sums below free of cancellation.
    shift = total[finite_total].mean() if finite_total.any() else 0.0
    centred = np.where(finite_total, total - shift, 0.0)
    finite = np.isfinite(matrix)
    if finite.all() and finite_total.all():
        # No missing entries (the usual case): the same sums without the masked copies.
        count = np.full(matrix.shape[1], float(matrix.shape[0]))
        sum_x = matrix.sum(axis=0)
        sum_xx = np.einsum("ij,ij->j", matrix, matrix)
        sum_y = np.full(matrix.shape[1], centred.sum())
        sum_yy = np.full(matrix.shape[1], centred @ centred)
        sum_xy = centred @ matrix
    else:
        present = finite & finite_total[:, None]
        weight = present.astype(np.float64)
        item = np.where(present, matrix, 0.0)
        count = weight.sum(axis=0)
        sum_x = item.sum(axis=0)
        sum_xx = (item**2).sum(axis=0)
        sum_y = centred @ weight
        sum_yy = centred**2 @ weight
        sum_xy = centred @ item
    return correlation_from_sums(count, sum_x, sum_xx, sum_y, sum_yy, sum_xy, corrected)


def correlation_from_sums(
    count: FloatArray, sum_x: FloatArray, sum_xx: FloatArray, sum_y: FloatArray,
    sum_yy: FloatArray, sum_xy: FloatArray, corrected: bool = True,
) -> FloatArray:
    """The point-biserial of :func:`point_biserial` from its sums, each of shape (n_items,).

    Over the examinees counted for item j (``count``): x is the item's 0/1 response and y the
    total, centred by any constant (the same for every item); ``sum_xy`` is Σ x·y, and so on.
    With ``corrected``, the correlation is taken with y − x instead of y. Sums gathered in
    pieces (a chunk of examinees at a time) give the same correlation as one pass.
    """
    if corrected:
        # y = total − x: expand the sums of y, y² and x·y in terms of those of x and total.
        sum_yy = sum_yy - 2.0 * sum_xy + sum_xx
        sum_xy = sum_xy - sum_xx
        sum_y = sum_y - sum_x
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sum_xy / count - (sum_x / count) * (sum_y / count)
        var_x = sum_xx / count - (sum_x / count) ** 2
        var_y = sum_yy / count - (sum_y / count) ** 2
    # Variances that are zero up to rounding mean a constant item or total: no correlation.
    scale_y = np.maximum(1.0, sum_yy / np.maximum(count, 1.0))
    degenerate = (var_x <= 1e-12) | (var_y <= 1e-12 * scale_y)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(degenerate | (count < 2), np.nan, cov / np.sqrt(var_x * var_y))


def group_size(n_examinees: int, group_fraction: float) -> int:
    """ceil(group_fraction · n_examinees), ignoring float noise below 1e-9 (so 0.3·10 is 3)."""
    return math.ceil(round(group_fraction * n_examinees, 9))


def discrimination_index(
    responses: ArrayLike,
    ranking_score: ArrayLike,
    group_fraction: float = DISCRIMINATION_GROUP_FRACTION,
) -> FloatArray:
    """Upper-lower discrimination index DI = p_high − p_low per item.

    Parameters
    ----------
    responses : array of shape (n_examinees, n_items)
        1.0 / 0.0 / NaN.
    ranking_score : array of shape (n_examinees,)
        The score examinees are ranked by (θ in the paper). Examinees whose score is NaN are left
        out before the groups are formed.
    group_fraction : float in (0, 0.5], default DISCRIMINATION_GROUP_FRACTION (0.25)
        Each group holds ceil(group_fraction · n) examinees, n being those with a finite score.

    Returns
    -------
    ndarray of shape (n_items,)
        Proportion correct (over finite entries) in the top group minus that in the bottom
        group, in [−1, 1]; NaN where a group has no finite entry for the item.

    Notes
    -----
    Ranking uses a stable ascending sort: among tied scores, the earlier examinee (lower row) is
    ranked lower, so the bottom group takes the earliest of tied examinees at its edge and the
    top group the latest.
    """
    matrix = _matrix(responses)
    score = np.asarray(ranking_score, dtype=np.float64)
    if score.shape != (matrix.shape[0],):
        raise ValueError(f"ranking_score must have shape ({matrix.shape[0]},); got {score.shape}")
    groups = rank_groups(score, group_fraction)
    if groups is None:
        return np.full(matrix.shape[1], np.nan)
    low, high = groups
    return item_p_values(matrix[high]) - item_p_values(matrix[low])


def rank_groups(
    ranking_score: ArrayLike, group_fraction: float = DISCRIMINATION_GROUP_FRACTION
) -> tuple[np.ndarray, np.ndarray] | None:
    """The bottom and top groups of :func:`discrimination_index`, as boolean masks.

    Parameters
    ----------
    ranking_score : array of shape (n_examinees,)
        NaN scores are left out before ranking.
    group_fraction : float in (0, 0.5]

    Returns
    -------
    (low, high), each a bool array of shape (n_examinees,) with ceil(group_fraction · n)
    entries set (n: finite scores); None when the groups are empty. Ties are broken as a stable
    ascending sort breaks them: at the bottom group's edge the earlier examinees are taken, at
    the top group's edge the later ones. Found by partition, in time linear in n_examinees.
    """
    if not (0.0 < group_fraction <= 0.5):
        raise ValueError(f"group_fraction must be in (0, 0.5]; got {group_fraction!r}")
    score = np.asarray(ranking_score, dtype=np.float64)
    finite = np.isfinite(score)
    values = score[finite]
    size = group_size(values.size, group_fraction)
    if size == 0:
        return None
    low_edge = np.partition(values, size - 1)[size - 1]
    high_edge = np.partition(values, values.size - size)[values.size - size]
    low = finite & (score < low_edge)
    high = finite & (score > high_edge)
    low[np.flatnonzero(score == low_edge)[: size - int(low.sum())]] = True
    ties = np.flatnonzero(score == high_edge)
    high[ties[ties.size - (size - int(high.sum())):]] = True
    return low, high
