"""Dichotomous item response theory: the 3PL item bank, probabilities and Fisher information.

All functions work on whole arrays: ``theta`` of shape (k,) against a bank of ``n_items`` items
gives (k, n_items) results. An item whose a, b or c is NaN has no parameters (INEP marks abandoned
items this way); it drops out of every likelihood and information sum.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

# Rows per block in the (n_examinees, n_items) passes: a block's temporaries stay in the CPU
# cache, which roughly halves the time of the elementwise work on a large matrix.
ROW_BLOCK = 2048
# Rows per block for the (grid points, rows) arrays of EAP and the ML/MAP start: they are reduced
# over grid points, one vectorised pass per point, which runs faster along long rows.
GRID_BLOCK = 16384

# Threads that share the blocks of rows. numpy releases the GIL inside its loops, so blocks run
# in parallel; the gain levels off near four threads, where memory bandwidth becomes the limit.
# Set to 1 to keep every computation on the calling thread.
MAX_THREADS = min(4, os.cpu_count() or 1)

_executors: dict[int, ThreadPoolExecutor] = {}
# A forked child inherits the pools but not their threads; it must start its own.
os.register_at_fork(after_in_child=_executors.clear)


# OpenBLAS multiplies on one thread when m·n·k ≤ 4·65536 (its GEMM_MULTITHREAD_THRESHOLD). Above
# that it wakes its own thread pool, which for products this small costs more than it saves and,
# on a busy machine, can cost milliseconds per call; the block threads above already share the
# work. So products are cut into slices under that size.
_SINGLE_THREAD_PRODUCT = 4 * 65536


def sliced_product(left: FloatArray, right: FloatArray) -> FloatArray:
    """``left @ right`` for (k, m) and (m, n) arrays, shape (k, n), computed in slices (of the
    longer of k and n) small enough that BLAS stays on the calling thread."""
    k, m = left.shape
    n = right.shape[1]
    if k * m * n <= _SINGLE_THREAD_PRODUCT:
        return left @ right
    out = np.empty((k, n))
    if k >= n:
        height = max(1, _SINGLE_THREAD_PRODUCT // (m * n))
        for start in range(0, k, height):
            rows = slice(start, start + height)
            np.matmul(left[rows], right, out=out[rows])
    else:
        width = max(1, _SINGLE_THREAD_PRODUCT // (k * m))
        for start in range(0, n, width):
            columns = slice(start, start + width)
            np.matmul(left, right[:, columns], out=out[:, columns])
    return out


def row_blocks(n_rows: int, block: int = ROW_BLOCK) -> Iterator[slice]:
    """Consecutive slices of at most ``block`` rows covering ``range(n_rows)``."""
    for start in range(0, n_rows, block):
        yield slice(start, min(start + block, n_rows))


def for_each_row_block(
    work: Callable[[slice], None], n_rows: int, block: int = ROW_BLOCK
) -> None:
    """Call ``work(rows)`` for every block of at most ``block`` rows, on up to MAX_THREADS
    threads.

    ``work`` must only write its own rows of preallocated outputs, so blocks never race. A single
    block runs on the calling thread; an exception in any block is raised here.
    """
    blocks = list(row_blocks(n_rows, block))
    threads = min(MAX_THREADS, len(blocks))
    if threads <= 1:
        for rows in blocks:
            work(rows)
        return
    # An executor starts no thread until it gets work, so losing a race here costs nothing.
    executor = _executors.get(threads) or _executors.setdefault(
        threads, ThreadPoolExecutor(threads, thread_name_prefix="analytics"))
    for _ in executor.map(work, blocks):
        pass


@dataclass(frozen=True, eq=False)
class ItemBank:
    """Parameters of a 3PL item bank.

    P_i(θ) = c_i + (1 − c_i) / (1 + exp(−D·a_i·(θ − b_i))), with D = ``scaling``.

    Parameters
    ----------
    a : array of shape (n_items,)
        Discrimination.
    b : array of shape (n_items,)
        Difficulty, on the θ scale.
    c : array of shape (n_items,) or None
        Pseudo-guessing (lower asymptote) in [0, 1). None means a 2PL bank (all zeros).
    scaling : float, default 1.0
        The constant D (1.0 for INEP parameters, 1.7 for PATCH/TIMSS-style parameters).

    Notes
    -----
    The arrays are copied to read-only float64 arrays, so a bank never changes after it is made.
    A NaN in any of a, b, c marks an item without parameters (``usable`` is False for it).
    """

    a: FloatArray
    b: FloatArray
    c: FloatArray
    scaling: float

    # Written out (dataclass keeps a class's own __init__) so the fields can be typed as what a
    # bank holds, frozen float arrays with c never None, while the constructor takes array-likes.
    def __init__(
        self, a: ArrayLike, b: ArrayLike, c: ArrayLike | None = None, scaling: float = 1.0
    ) -> None:
        a_array = _frozen_float_array(a, "a")
        b_array = _frozen_float_array(b, "b")
        c_array = np.zeros_like(a_array) if c is None else _frozen_float_array(c, "c")
        c_array.setflags(write=False)
        if not (a_array.shape == b_array.shape == c_array.shape):
            raise ValueError(
                f"a, b and c must have the same shape (n_items,); got a{a_array.shape}, "
                f"b{b_array.shape}, c{c_array.shape}"
            )
        if np.any((c_array < 0.0) | (c_array >= 1.0)):
            raise ValueError("c (guessing) must lie in [0, 1) for every item with parameters")
        d = float(scaling)
        if not (np.isfinite(d) and d > 0.0):
            raise ValueError(f"scaling (D) must be a finite positive number; got {scaling!r}")
        # Frozen dataclass: the validated copies are set past its __setattr__.
        object.__setattr__(self, "a", a_array)
        object.__setattr__(self, "b", b_array)
        object.__setattr__(self, "c", c_array)
        object.__setattr__(self, "scaling", d)

    @classmethod
    def from_arrays(
        cls,
        a: ArrayLike,
        b: ArrayLike,
        c: ArrayLike | None = None,
        scaling: float = 1.0,
    ) -> ItemBank:
        """Build a bank from array-likes; ``c=None`` gives a 2PL bank.

        Raises
        ------
        ValueError
            If a, b, c are not one-dimensional with one shared length, if a c lies outside
            [0, 1), or if ``scaling`` is not finite and positive.
        """
        return cls(a=a, b=b, c=c, scaling=scaling)

    @property
    def n_items(self) -> int:
        """Number of items, usable or not."""
        return int(self.a.shape[0])

    @cached_property
    def usable(self) -> NDArray[np.bool_]:
        """Bool mask of shape (n_items,): True where a, b and c are all finite."""
        mask = np.isfinite(self.a) & np.isfinite(self.b) & np.isfinite(self.c)
        mask.setflags(write=False)
        return mask

    def subset(self, mask_or_index: ArrayLike) -> ItemBank:
        """A new bank with the items selected by a bool mask or an integer index array."""
        selector = np.asarray(mask_or_index)
        return ItemBank(self.a[selector], self.b[selector], self.c[selector], self.scaling)


def _frozen_float_array(values: ArrayLike, name: str) -> FloatArray:
    array = np.array(values, dtype=np.float64, copy=True)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (n_items,); got shape {array.shape}")
    array.setflags(write=False)
    return array


# Logits are clipped to ±LOGIT_LIMIT before exponentiating: exp(700) is finite and e^−700 ≈ 1e−304
# is a normal double, so P, Q and their logs stay finite and relatively accurate everywhere.
# Only |D·a·(θ − b)| > 700, far outside any real item, is affected (P floors at ~1e−304).
LOGIT_LIMIT = 700.0


class ResponseProbabilities(NamedTuple):
    """P, Q = 1 − P, the logistic s and 1 − s, and s/P (a factor of the score and the
    information), each of shape (rows, n_items) for a bank of usable items."""

    p: FloatArray
    q: FloatArray
    s: FloatArray
    s_complement: FloatArray
    s_over_p: FloatArray


def response_probabilities(z: FloatArray, guessing: FloatArray) -> ResponseProbabilities:
    """3PL probabilities from the logit ``z = D·a·(θ − b)`` (rows, n_items) and ``guessing``.

    With e = exp(z): P = (c + e)/(1 + e), Q = (1 − c)/(1 + e), s = e/(1 + e), 1 − s = 1/(1 + e)
    and s/P = e/(c + e). One exp and no subtraction of nearly equal numbers, so P and Q are
    relatively accurate in both tails and their logs can be taken directly, without clipping
    probabilities. Every entry of ``guessing`` must be finite (a bank restricted to usable
    items); ``z`` is clipped to ±LOGIT_LIMIT first.
    """
    e = np.clip(z, -LOGIT_LIMIT, LOGIT_LIMIT)
    np.exp(e, out=e)
    s_complement = 1.0 / (1.0 + e)
    c_plus_e = guessing + e
    p = c_plus_e * s_complement
    q = (1.0 - guessing) * s_complement
    s = e * s_complement
    # For c = 0 this is e/e, exactly 1.
    s_over_p = e / c_plus_e
    return ResponseProbabilities(p, q, s, s_complement, s_over_p)


def logits(theta: ArrayLike, bank: ItemBank) -> FloatArray:
    """z = D·a·(θ − b) of shape (k, n_items) for ``theta`` of shape (k,)."""
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    slope = bank.scaling * bank.a
    # z = slope·θ − slope·b as a (k, 2) @ (2, n_items) product: for tall θ this is several times
    # faster than broadcasting θ[:, None] against the items.
    design = np.column_stack([theta, np.ones_like(theta)])
    return sliced_product(design, np.vstack([slope, -slope * bank.b]))


def probability(theta: ArrayLike, bank: ItemBank) -> FloatArray:
    """Probability of a correct answer.

    Parameters
    ----------
    theta : array-like of shape (k,) or scalar
        Abilities.
    bank : ItemBank

    Returns
    -------
    ndarray of shape (k, n_items)
        P_i(θ_j); NaN in the columns of items without parameters.
    """
    z = logits(theta, bank)
    with np.errstate(invalid="ignore"):
        probs = response_probabilities(z, bank.c).p
    # NaN parameters already give NaN; the assignment also covers an infinite a, b or c.
    probs[:, ~bank.usable] = np.nan
    return probs


def information_from_probabilities(
    probs: ResponseProbabilities, discrimination: FloatArray, guessing: FloatArray, scaling: float
) -> FloatArray:
    """Item information D²a²·((P−c)²/(1−c)²)·(Q/P) from precomputed probabilities.

    With P − c = (1−c)·s and Q = (1−c)·(1−s) this is D²a²·(1−c)·s·(1−s)·(s/P), a form that stays
    finite and accurate in both tails. Shapes follow ``probs`` (rows, n_items).
    """
    weight = (scaling * discrimination) ** 2 * (1.0 - guessing)
    return weight * probs.s * probs.s_complement * probs.s_over_p


def item_information(theta: ArrayLike, bank: ItemBank) -> FloatArray:
    """Fisher information of each item.

    Parameters
    ----------
    theta : array-like of shape (k,) or scalar
    bank : ItemBank

    Returns
    -------
    ndarray of shape (k, n_items)
        I_i(θ) = D² a² ((P − c)² / (1 − c)²) ((1 − P) / P); 0 for items without parameters.
    """
    theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
    info = np.zeros((theta.shape[0], bank.n_items))
    usable = bank.usable
    if usable.any():
        sub = bank.subset(usable)
        probs = response_probabilities(logits(theta, sub), sub.c)
        info[:, usable] = information_from_probabilities(probs, sub.a, sub.c, sub.scaling)
    return info


def test_information(theta: ArrayLike, bank: ItemBank) -> FloatArray:
    """Test information I(θ) = Σ_i I_i(θ) over usable items, shape (k,)."""
    return item_information(theta, bank).sum(axis=1)


# Keep pytest from collecting the library function above as a test when it is imported there
# (through __dict__: a function's type declares no __test__ attribute).
test_information.__dict__["__test__"] = False


def standard_error_curve(theta: ArrayLike, bank: ItemBank) -> FloatArray:
    """SE(θ) = 1/sqrt(I(θ)) of shape (k,); inf where the test information is 0."""
    info = test_information(theta, bank)
    with np.errstate(divide="ignore"):
        return 1.0 / np.sqrt(info)


class CountedResponses(NamedTuple):
    """Responses reduced to the entries that count in a likelihood.

    ``bank`` holds only the usable items; ``correct`` and ``counted`` are float arrays of shape
    (n_examinees, bank.n_items) with 1.0 where the examinee answered the item correctly / has a
    finite response to it, 0.0 elsewhere; ``all_counted`` says that no entry is missing.
    """

    correct: FloatArray
    counted: FloatArray
    bank: ItemBank
    all_counted: bool

    @property
    def n_examinees(self) -> int:
        """Number of rows."""
        return int(self.counted.shape[0])

    def rows(self, selector: slice | NDArray[np.intp] | NDArray[np.bool_]) -> CountedResponses:
        """The same responses for a subset of examinees."""
        return CountedResponses(self.correct[selector], self.counted[selector], self.bank,
                                self.all_counted)

    @property
    def wrong(self) -> FloatArray:
        """1.0 where a counted response is wrong, shape (n_examinees, n_items)."""
        return self.counted - self.correct


def as_response_matrix(responses: ArrayLike, n_items: int) -> tuple[FloatArray, NDArray[np.bool_]]:
    """``responses`` as a float64 (n_examinees, n_items) matrix, with its finite-entry mask.

    A 1-D array is one examinee.

    Raises
    ------
    ValueError
        If the number of columns differs from ``n_items`` or a finite entry is not 0 or 1.
    """
    matrix = np.asarray(responses, dtype=np.float64)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.ndim != 2 or matrix.shape[1] != n_items:
        raise ValueError(
            f"responses must have shape (n_examinees, {n_items}); got {np.shape(responses)}"
        )
    finite = np.isfinite(matrix)
    # NaN and ±inf compare unequal to both 0 and 1, so this counts the finite 0/1 entries.
    n_binary = np.count_nonzero(matrix == 0.0) + np.count_nonzero(matrix == 1.0)
    if n_binary != np.count_nonzero(finite):
        raise ValueError("responses must be 1.0 (correct), 0.0 (wrong) or NaN (missing)")
    return matrix, finite


def counted_responses(responses: ArrayLike, bank: ItemBank) -> CountedResponses:
    """Split ``responses`` (n_examinees, n_items) into what counts in the likelihood.

    An entry counts when the response is finite and the item has parameters.
    """
    matrix, finite = as_response_matrix(responses, bank.n_items)
    usable = bank.usable
    if not usable.all():
        matrix, finite = matrix[:, usable], finite[:, usable]
        bank = bank.subset(usable)
    all_counted = bool(finite.all())
    if all_counted:
        correct = matrix
        # A read-only broadcast of 1.0: no (n, n_items) array to allocate and fill.
        counted = np.broadcast_to(np.float64(1.0), matrix.shape)
    else:
        correct = np.where(finite, matrix, 0.0)
        counted = finite.astype(np.float64)
    return CountedResponses(correct, counted, bank, all_counted)
