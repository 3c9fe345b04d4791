"""Option shuffles: which original option is shown under which letter, and mapping answers back.

Convention used everywhere: a permutation ``perm`` is an int array of shape (5,) where
``perm[d]`` is the index of the *original* option displayed under letter ``d`` (0 = A).
So ``displayed_options[d] = options[perm[d]]``; a model choosing displayed letter ``d`` chose
original letter ``LETTERS[perm[d]]``; displayed probabilities ``p`` become original-order
probabilities ``q`` with ``q[perm[d]] = p[d]``.

Shuffle 0 is the identity (the original order) unless ``identity_first=False``.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence

import numpy as np

from enem.areas import N_OPTIONS
from enem.areas import OPTION_LETTERS as LETTERS

_ALL_PERMUTATIONS = np.array(list(itertools.permutations(range(N_OPTIONS))), dtype=np.int64)


def stable_hash(value: str | int) -> int:
    """A 64-bit integer from ``value`` that is the same on every machine and Python run
    (unlike ``hash()``)."""
    digest = hashlib.sha256(str(value).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little")


def item_rng(seed: int, item_key: str | int, *extra: int) -> np.random.Generator:
    """A numpy Generator determined by (seed, item_key, *extra) alone."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), stable_hash(item_key), *extra]))


def option_permutations(
    n_shuffles: int = 30,
    seed: int = 0,
    item_key: str | int = "",
    *,
    identity_first: bool = True,
    distinct: bool = True,
) -> np.ndarray:
    """Deterministic option orders for one item: int64 array of shape (n_shuffles, 5).

    The result depends only on (seed, item_key) — not on which other items are in the run or
    their order — so a resumed run regenerates identical shuffles. Row 0 is the identity when
    ``identity_first``. With ``distinct`` (default) no permutation repeats (at most 120 rows);
    the rest are drawn uniformly without replacement from the 120 orders.
    """
    if n_shuffles < 1:
        raise ValueError(f"n_shuffles must be >= 1, got {n_shuffles}")
    rng = item_rng(seed, item_key)
    if not distinct:
        rows = [rng.permutation(N_OPTIONS) for _ in range(n_shuffles)]
        if identity_first:
            rows[0] = np.arange(N_OPTIONS)
        return np.stack(rows).astype(np.int64)
    if n_shuffles > len(_ALL_PERMUTATIONS):
        raise ValueError(f"at most {len(_ALL_PERMUTATIONS)} distinct shuffles, got {n_shuffles}")
    if identity_first:
        # _ALL_PERMUTATIONS[0] is the identity; draw the others from the remaining 119.
        others = rng.permutation(len(_ALL_PERMUTATIONS) - 1)[: n_shuffles - 1] + 1
        index = np.concatenate([[0], others])
    else:
        index = rng.permutation(len(_ALL_PERMUTATIONS))[:n_shuffles]
    return _ALL_PERMUTATIONS[index].copy()


def check_permutation(perm: Sequence[int] | np.ndarray) -> np.ndarray:
    """``perm`` as an int64 array (5,), or ValueError if it is not a permutation of 0..4."""
    arr = np.asarray(perm, dtype=np.int64)
    if arr.shape != (N_OPTIONS,) or sorted(arr.tolist()) != list(range(N_OPTIONS)):
        raise ValueError(f"not a permutation of 0..4: {perm!r}")
    return arr


def apply_permutation(options: Sequence[str], perm: Sequence[int] | np.ndarray) -> tuple[str, ...]:
    """The options in displayed order: ``out[d] = options[perm[d]]``."""
    arr = check_permutation(perm)
    if len(options) != N_OPTIONS:
        raise ValueError(f"expected 5 options, got {len(options)}")
    return tuple(options[i] for i in arr)


def displayed_key(key: str, perm: Sequence[int] | np.ndarray) -> str:
    """The letter under which the original option ``key`` is displayed."""
    arr = check_permutation(perm)
    return LETTERS[int(np.flatnonzero(arr == LETTERS.index(key))[0])]


def to_original_letter(displayed: str | int, perm: Sequence[int] | np.ndarray) -> str:
    """Map a displayed letter (or index 0..4) back to the original letter."""
    arr = check_permutation(perm)
    index = LETTERS.index(displayed) if isinstance(displayed, str) else int(displayed)
    return LETTERS[int(arr[index])]


def to_original_choices(choices: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """Displayed choice indices (S,) → original indices (S,); -1 (no answer) stays -1.

    ``perms`` has shape (S, 5).
    """
    choices = np.asarray(choices, dtype=np.int64)
    perms = np.asarray(perms, dtype=np.int64)
    safe = np.where(choices < 0, 0, choices)
    mapped = np.take_along_axis(perms, safe[:, None], axis=1)[:, 0]
    return np.where(choices < 0, -1, mapped)


def to_original_probs(probs: np.ndarray, perms: np.ndarray) -> np.ndarray:
    """Displayed-letter probabilities (..., 5) → original-letter order (..., 5).

    ``perms`` broadcasts against ``probs`` (e.g. both (S, 5)); ``out[..., perm[d]] = p[..., d]``.
    """
    probs = np.asarray(probs)
    perms = np.broadcast_to(np.asarray(perms, dtype=np.int64), probs.shape)
    out = np.empty_like(probs)
    np.put_along_axis(out, perms, probs, axis=-1)
    return out


def key_permutation(
    key_index: int, target: int, rng: np.random.Generator
) -> np.ndarray:
    """A random permutation (5,) that displays original option ``key_index`` under ``target``."""
    others = [i for i in range(N_OPTIONS) if i != key_index]
    rest = [others[i] for i in rng.permutation(len(others))]
    rest.insert(target, key_index)
    return np.array(rest, dtype=np.int64)
