"""Response strings (TX_RESPOSTAS, RESPONSE_PATTERN) to character and 0/1 matrices.

All functions work on many candidates at once: a batch of equal-length strings becomes one
(n_candidates, n_chars) uint8 matrix of ASCII codes without a Python loop over candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from enem.areas import BLANK_MARK, MULTIPLE_MARK, OPTION_LETTERS, UNCHOSEN_MARK

_VALID_MARKS = np.frombuffer((OPTION_LETTERS + BLANK_MARK + MULTIPLE_MARK).encode(), np.uint8)
#: A lookup by byte value (faster than np.isin on full-size years).
_IS_VALID_MARK = np.zeros(256, bool)
_IS_VALID_MARK[_VALID_MARKS] = True
_BLANK = ord(BLANK_MARK)
_UNCHOSEN = ord(UNCHOSEN_MARK)


def string_lengths(strings: pa.Array) -> np.ndarray:
    """Byte length of each string, shape (n,); -1 for nulls."""
    lengths = pc.binary_length(pc.cast(strings, pa.binary()))
    return np.asarray(lengths.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)


def strings_to_chars(strings: pa.Array | Sequence[str], width: int) -> np.ndarray:
    """Stack strings that all have ``width`` bytes into an (n, width) uint8 matrix.

    Callers filter out other lengths first (see ``string_lengths``); a mismatch raises ValueError.
    """
    if not isinstance(strings, (pa.Array, pa.ChunkedArray)):
        strings = pa.array(list(strings), type=pa.string())
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    binary = pc.cast(strings, pa.large_binary())
    n = len(binary)
    if n == 0:
        return np.zeros((0, width), dtype=np.uint8)
    if binary.null_count:
        raise ValueError("null response strings must be filtered out before stacking")
    offsets = np.frombuffer(binary.buffers()[1], dtype=np.int64)
    offsets = offsets[binary.offset: binary.offset + n + 1]
    if not np.all(np.diff(offsets) == width):
        raise ValueError(f"every response string must have {width} characters")
    data = np.frombuffer(binary.buffers()[2], dtype=np.uint8)
    return data[offsets[0]: offsets[0] + n * width].reshape(n, width).copy()


def invalid_mark_rows(chars: np.ndarray) -> np.ndarray:
    """Rows holding a character other than A–E, '.' or '*', shape (n,) bool."""
    return ~_IS_VALID_MARK[chars].all(axis=1)


def select_language_block(chars: np.ndarray, language: np.ndarray, block_size: int = 5
                          ) -> np.ndarray:
    """Drop the unchosen foreign-language block of 50-character LC strings (2014–2021 layout).

    ``chars`` is (n, 2·block_size + n_common): English block, Spanish block, common items.
    ``language`` is (n,) with 0 English / 1 Spanish. Returns (n, block_size + n_common).
    """
    english = chars[:, :block_size]
    spanish = chars[:, block_size: 2 * block_size]
    chosen = np.where((np.asarray(language) == 1)[:, None], spanish, english)
    return np.concatenate([chosen, chars[:, 2 * block_size:]], axis=1)


def unchosen_block_filled(chars: np.ndarray, language: np.ndarray, block_size: int = 5
                          ) -> np.ndarray:
    """True where the unchosen block of a 50-character LC string is all '9', shape (n,)."""
    english = chars[:, :block_size]
    spanish = chars[:, block_size: 2 * block_size]
    unchosen = np.where((np.asarray(language) == 1)[:, None], english, spanish)
    return (unchosen == _UNCHOSEN).all(axis=1)


def correctness(chars: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """1.0 where the mark equals the key, else 0.0 (blank and multiple marks are wrong).

    ``chars`` (n, n_items) uint8, ``keys`` (n_items,) uint8 → (n, n_items) float64.
    """
    return (chars == keys[None, :]).astype(np.float64)


def blank_rows(chars: np.ndarray) -> np.ndarray:
    """Candidates who left every item blank, shape (n,) bool."""
    return (chars == _BLANK).all(axis=1)


def patterns_to_responses(patterns: Sequence[str]) -> np.ndarray:
    """0/1 strings (e.g. RESPONSE_PATTERN) to an (n, length) float matrix; other marks are NaN.

    All strings must have the same length.
    """
    chars = strings_to_chars(patterns, len(patterns[0]) if len(patterns) else 0)
    responses = np.full(chars.shape, np.nan)
    responses[chars == ord("1")] = 1.0
    responses[chars == ord("0")] = 0.0
    return responses


def stored_patterns_to_responses(patterns: Sequence[object], usable: np.ndarray) -> np.ndarray:
    """Stored model patterns to an (n, n_items) 1/0/NaN matrix for one booklet form.

    A stored pattern (``model_scores.response_pattern``) has one '1', '0' or '.' per item of
    the form, or one per item with parameters only (``usable``, shape (n_items,) bool) when the
    source left the others out; those items then get NaN. Marks other than '1' and '0' are NaN
    (:func:`patterns_to_responses`). A pattern whose length is neither, or a value that is no
    string, gives a row of NaN. Length counts characters: a non-ASCII character is one
    (NaN) mark, as it is one position of the pattern.
    """
    usable = np.asarray(usable, dtype=bool)
    texts = list(patterns)
    out = np.full((len(texts), usable.size), np.nan)
    # Width → the columns its marks fill (one entry when every item has parameters).
    widths = {usable.size: np.arange(usable.size), int(usable.sum()): np.flatnonzero(usable)}
    for width, columns in widths.items():
        found = [(row, text) for row, text in enumerate(texts)
                 if isinstance(text, str) and len(text) == width]
        if found:
            rows = np.array([row for row, _ in found], dtype=np.intp)
            ascii_texts = [text.encode("ascii", "replace").decode("ascii") for _, text in found]
            out[np.ix_(rows, columns)] = patterns_to_responses(ascii_texts)
    return out
