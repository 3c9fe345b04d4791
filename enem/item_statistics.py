"""Per-item tables for the dashboard, computed from the scoring pass's character matrices.

Items are keyed by CO_ITEM (``item_id``), so an item's statistics pool every booklet it appears
in. The population of an LC foreign-language item is the candidates of that language.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analytics.ctt import group_size, item_p_values, point_biserial
from enem.items import ItemsTable
from enem.score_batches import AreaAccumulator

OPTION_MARKS = "ABCDE.*"
#: Width of the θ bins of the empirical item characteristic curves.
ICC_BIN_WIDTH = 0.25
DI_FRACTION = 0.25


#: Items whose 0/1 matrix is built at a time: bounds memory on full-size years.
COLUMN_BLOCK = 12


def area_item_frames(
    year: int, area: str, items: ItemsTable, accumulator: AreaAccumulator,
    di_fraction: float = DI_FRACTION,
) -> dict[str, pd.DataFrame]:
    """item_stats, item_icc and option_counts rows for one area.

    The point-biserial correlates each item with the candidate's CTT score on the whole test
    (corrected: the item's own answer removed).
    """
    stats, iccs, options = [], [], []
    for language, item_ids, chars, keys, theta, total in _populations(items, accumulator):
        # What depends on θ alone is worked out once per population, not once per block.
        bins = _ThetaBins(theta, chars)
        low, high = _di_groups(theta, di_fraction)
        for start in range(0, len(item_ids), COLUMN_BLOCK):
            block = slice(start, start + COLUMN_BLOCK)
            block_chars, block_ids = chars[:, block], item_ids[block]
            responses = (block_chars == keys[None, block]).astype(np.float64)
            not_given = block_chars == 0
            if not_given.any():  # an item missing from some candidates' forms
                responses[not_given] = np.nan
            if low is None:
                di = np.full(responses.shape[1], np.nan)
            else:
                di = item_p_values(responses[high]) - item_p_values(responses[low])
            stats.append(pd.DataFrame({
                "year": year, "area": area, "item_id": block_ids, "item_language": language,
                "n": (~not_given).sum(axis=0),
                "p_value": item_p_values(responses),
                "point_biserial": point_biserial(responses, total),
                "di": di,
                "di_fraction": di_fraction,
            }))
            del responses
            iccs.append(bins.icc_rows(year, area, language, block_ids, block, keys[block]))
        options.append(_option_rows(year, area, language, item_ids, chars))
    return {
        "item_stats": pd.concat(stats, ignore_index=True) if stats else None,
        "item_icc": pd.concat(iccs, ignore_index=True) if iccs else None,
        "option_counts": pd.concat(options, ignore_index=True) if options else None,
    }


def _populations(items: ItemsTable, accumulator: AreaAccumulator):
    """Yield (item_language, item_ids, chars, keys, θ, CTT) per population of the area.

    Outside LC: one population, every candidate. In LC: the common items over everyone, and each
    language's items over that language's candidates. ``chars`` is (n, n_items) with 0 where a
    candidate's form did not hold the item.
    """
    keys_by_form = list(accumulator.chars)
    if not keys_by_form:
        return
    forms = [items.forms[key] for key in keys_by_form]
    languages = sorted({form.language for form in forms}, key=lambda v: -1 if v is None else v)
    common = _common_item_ids(forms)
    if languages == [None]:
        yield (None, common, *_stack(forms, keys_by_form, accumulator, common))
        return
    yield (None, common, *_stack(forms, keys_by_form, accumulator, common))
    for language in (0, 1):
        chosen = [(f, k) for f, k in zip(forms, keys_by_form) if f.language == language]
        if not chosen:
            continue
        specific = np.unique(np.concatenate([f.item_ids[: f.language_items] for f, _ in chosen]))
        yield (language, specific, *_stack([f for f, _ in chosen], [k for _, k in chosen],
                                           accumulator, specific))


def _common_item_ids(forms) -> np.ndarray:
    return np.unique(np.concatenate([f.item_ids[f.language_items:] for f in forms]))


def _stack(forms, keys_by_form, accumulator: AreaAccumulator, item_ids: np.ndarray):
    """Place each form's characters into columns ordered by ``item_ids``; stack the rows."""
    column_of = {int(item): j for j, item in enumerate(item_ids)}
    blocks, thetas, totals = [], [], []
    keys = np.zeros(len(item_ids), np.uint8)
    for form, key in zip(forms, keys_by_form):
        form_chars = np.concatenate(accumulator.chars[key])
        block = np.zeros((form_chars.shape[0], len(item_ids)), np.uint8)
        for source, item in enumerate(form.item_ids):
            target = column_of.get(int(item))
            if target is not None:
                block[:, target] = form_chars[:, source]
                keys[target] = form.keys[source]
        blocks.append(block)
        thetas.append(np.concatenate(accumulator.theta[key]))
        totals.append(np.concatenate(accumulator.ctt[key]))
    return np.concatenate(blocks), keys, np.concatenate(thetas), np.concatenate(totals)


def _di_groups(theta: np.ndarray, di_fraction: float):
    """Rows of the bottom and top groups of the discrimination index, ranked by θ as
    ``analytics.ctt.discrimination_index`` ranks them (stable ascending sort, NaN left out);
    (None, None) when the groups are empty."""
    if not (0.0 < di_fraction <= 0.5):
        raise ValueError(f"group_fraction must be in (0, 0.5]; got {di_fraction!r}")
    ranked = np.flatnonzero(np.isfinite(theta))
    ranked = ranked[np.argsort(theta[ranked], kind="stable")]
    size = group_size(ranked.size, di_fraction)
    if size == 0:
        return None, None
    return ranked[:size], ranked[-size:]


class _ThetaBins:
    """A population's candidates sorted by θ bin (of width ICC_BIN_WIDTH), for the empirical
    ICC points: the sort is done once and each block of items only counts within the bins."""

    def __init__(self, theta: np.ndarray, chars: np.ndarray):
        bins = np.floor(theta / ICC_BIN_WIDTH).astype(np.int64)
        order = np.argsort(bins, kind="stable")
        sorted_bins = bins[order]
        self.starts = np.flatnonzero(np.r_[True, sorted_bins[1:] != sorted_bins[:-1]])
        self.edges = sorted_bins[self.starts] * ICC_BIN_WIDTH
        self.chars = chars[order]

    def icc_rows(self, year, area, language, item_ids, block: slice, keys) -> pd.DataFrame:
        """Candidates and correct answers per (item, θ bin) of one block of items."""
        ordered = self.chars[:, block]
        answered = ordered != 0
        n = np.add.reduceat(answered, self.starts, axis=0, dtype=np.int64)
        correct = np.add.reduceat(answered & (ordered == keys[None, :]), self.starts, axis=0,
                                  dtype=np.int64)
        n_bins, n_items = n.shape
        frame = pd.DataFrame({
            "year": year, "area": area,
            "item_id": np.tile(item_ids, n_bins),
            "item_language": language,
            "theta_bin": np.repeat(self.edges, n_items),
            "n": n.reshape(-1),
            "n_correct": correct.reshape(-1),
        })
        return frame[frame["n"] > 0]


def _option_rows(year, area, language, item_ids, chars) -> pd.DataFrame:
    """How many candidates chose each option (and '.', '*') of each item."""
    codes = np.frombuffer(OPTION_MARKS.encode(), np.uint8)
    counts = np.stack([np.bincount(chars[:, j], minlength=256)[codes]
                       for j in range(chars.shape[1])])
    return pd.DataFrame({
        "year": year, "area": area,
        "item_id": np.repeat(item_ids, len(OPTION_MARKS)),
        "item_language": language,
        "option": np.tile(list(OPTION_MARKS), len(item_ids)),
        "n": counts.reshape(-1),
    })
