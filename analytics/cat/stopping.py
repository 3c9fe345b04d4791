"""Stopping rules for adaptive testing, vectorised over simulees."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from analytics.irt import FloatArray

#: The paper's test length cap.
DEFAULT_MAX_ITEMS = 20


class StoppingRule(abc.ABC):
    """Base class: ``stop(n_given, se)`` → bool (n,), True where a simulee's test ends after
    ``n_given`` items with standard errors ``se`` (n,). No test exceeds ``max_items``."""

    name: ClassVar[str]
    max_items: int

    @abc.abstractmethod
    def stop(self, n_given: int, se: FloatArray) -> NDArray[np.bool_]:
        """Whether each test ends now."""


def _check_max_items(max_items: int) -> None:
    if int(max_items) != max_items or max_items < 1:
        raise ValueError(f"max_items must be a positive integer; got {max_items!r}")


@dataclass(frozen=True)
class FixedLength(StoppingRule):
    """Every test has exactly ``max_items`` items (or the whole bank, if smaller)."""

    max_items: int = DEFAULT_MAX_ITEMS
    name: ClassVar[str] = "length"

    def __post_init__(self) -> None:
        _check_max_items(self.max_items)

    def stop(self, n_given: int, se: FloatArray) -> NDArray[np.bool_]:
        return np.full(np.shape(se), n_given >= self.max_items)


@dataclass(frozen=True)
class StandardErrorTarget(StoppingRule):
    """Stop once SE(θ̂) < ``se_target`` (catsim's ``MinErrorStopper``), or at ``max_items``."""

    se_target: float = 0.3
    max_items: int = DEFAULT_MAX_ITEMS
    name: ClassVar[str] = "se"

    def __post_init__(self) -> None:
        _check_max_items(self.max_items)
        if not (np.isfinite(self.se_target) and self.se_target > 0):
            raise ValueError(f"se_target must be positive; got {self.se_target!r}")

    def stop(self, n_given: int, se: FloatArray) -> NDArray[np.bool_]:
        return (np.asarray(se) < self.se_target) | (n_given >= self.max_items)
