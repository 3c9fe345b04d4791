"""Item selection rules for adaptive testing, vectorised over simulees.

Each selector picks one unused item per simulee from ``available`` (n, n_items) bool, given
the current θ̂ (n,). Swappable roles, one small class each: :class:`MaxInformation` (the
paper's rule), :class:`RandomItems` (a random fixed form, the paper's baseline) and
:class:`Randomesque` (exposure control: a random one of the k most informative items,
Kingsbury & Zara 1989).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from analytics.irt import FloatArray, ItemBank, for_each_row_block, item_information


class ItemSelector(abc.ABC):
    """Base class: ``select(theta, available, bank, rng)`` → bank index per simulee, (n,).

    Every row of ``available`` must hold at least one True.
    """

    name: ClassVar[str]

    @abc.abstractmethod
    def select(self, theta: FloatArray, available: NDArray[np.bool_], bank: ItemBank,
               rng: np.random.Generator) -> NDArray[np.intp]:
        """One available item per row of ``available``."""


def available_information(theta: FloatArray, available: NDArray[np.bool_],
                          bank: ItemBank) -> FloatArray:
    """Fisher information I_j(θ̂_i) (n, n_items), −inf where item j is not available to i.

    Computed in blocks of rows on the analytics threads (``irt.for_each_row_block``).
    """
    info = np.empty(available.shape)

    def fill(rows: slice) -> None:
        block = item_information(theta[rows], bank)
        block[~available[rows]] = -np.inf
        info[rows] = block

    for_each_row_block(fill, theta.shape[0])
    return info


@dataclass(frozen=True)
class MaxInformation(ItemSelector):
    """The unused item with the most Fisher information at θ̂ (the lowest index on a tie)."""

    name: ClassVar[str] = "max-info"

    def select(self, theta: FloatArray, available: NDArray[np.bool_], bank: ItemBank,
               rng: np.random.Generator) -> NDArray[np.intp]:
        return available_information(theta, available, bank).argmax(axis=1)


@dataclass(frozen=True)
class RandomItems(ItemSelector):
    """A uniformly random unused item, whatever θ̂: the first t items of a simulee are a
    random fixed form of length t."""

    name: ClassVar[str] = "random"

    def select(self, theta: FloatArray, available: NDArray[np.bool_], bank: ItemBank,
               rng: np.random.Generator) -> NDArray[np.intp]:
        keys = rng.random(available.shape)
        keys[~available] = -1.0
        return keys.argmax(axis=1)


@dataclass(frozen=True)
class Randomesque(ItemSelector):
    """A uniformly random item among the ``k`` unused items most informative at θ̂ (all
    unused items when fewer than ``k`` remain)."""

    k: int = 5
    name: ClassVar[str] = "randomesque"

    def __post_init__(self) -> None:
        if int(self.k) != self.k or self.k < 1:
            raise ValueError(f"k must be a positive integer; got {self.k!r}")

    def select(self, theta: FloatArray, available: NDArray[np.bool_], bank: ItemBank,
               rng: np.random.Generator) -> NDArray[np.intp]:
        info = available_information(theta, available, bank)
        k = min(int(self.k), bank.n_items)
        top = np.argpartition(-info, k - 1, axis=1)[:, :k]
        # Never draw an unavailable item: a row with fewer than k left draws among those left.
        n_left = np.minimum(available.sum(axis=1), k)
        top_info = np.take_along_axis(info, top, axis=1)
        order = np.argsort(-top_info, axis=1, kind="stable")
        ranked = np.take_along_axis(top, order, axis=1)
        pick = (rng.random(theta.shape[0]) * n_left).astype(np.intp)
        return ranked[np.arange(theta.shape[0]), pick]


SELECTORS: dict[str, type[ItemSelector]] = {
    MaxInformation.name: MaxInformation, RandomItems.name: RandomItems,
    Randomesque.name: Randomesque,
}
"""Selectors by the name the command line and the dashboard use."""
