"""Per-item tables for the dashboard, computed from the scoring pass's character matrices.

Items are keyed by CO_ITEM (``item_id``), so an item's statistics pool every booklet it appears
in. The population of an LC foreign-language item is the candidates of that language. The counts
by summed score per booklet form (``item_score_counts``) are in ``enem.score_tables``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analytics.ctt import (
    DISCRIMINATION_GROUP_FRACTION,
    correlation_from_sums,
    rank_groups,
    ratio,
)
from enem.items import ItemsTable
from enem.score_batches import AreaAccumulator

OPTION_MARKS = "ABCDE.*"
#: Width of the θ bins of the empirical item characteristic curves.
ICC_BIN_WIDTH = 0.25


#: Candidates handled at a time in the one pass over a population: bounds the temporaries to
#: a few MB whatever the year's size, and keeps them in the processor's cache.
CHUNK_ROWS = 32_768


def area_item_frames(
    year: int, area: str, items: ItemsTable, accumulator: AreaAccumulator,
    di_fraction: float = DISCRIMINATION_GROUP_FRACTION, chunk_rows: int = CHUNK_ROWS,
) -> dict[str, pd.DataFrame]:
    """item_stats, item_icc, option_counts and option_theta_counts rows for one area.

    The point-biserial correlates each item with the candidate's CTT score on the whole test
    (corrected: the item's own answer removed). Every statistic is a sum over candidates, so
    each population is read once, ``chunk_rows`` candidates at a time (``_ItemSums``).
    """
    stats, iccs, options, options_by_bin = [], [], [], []
    for language, item_ids, chars, keys, theta, total in _populations(items, accumulator):
        sums = _ItemSums.gather(chars, keys, theta, total, di_fraction, chunk_rows)
        labels = {"year": year, "area": area}
        stats.append(pd.DataFrame({
            **labels, "item_id": item_ids, "item_language": language,
            "n": sums.answered, "p_value": ratio(sums.correct, sums.answered),
            "point_biserial": correlation_from_sums(*sums.moments),
            "di": sums.discrimination_index(), "di_fraction": di_fraction,
        }))
        n_bins = sums.icc_answered.shape[0]
        icc = pd.DataFrame({
            **labels, "item_id": np.tile(item_ids, n_bins), "item_language": language,
            "theta_bin": np.repeat(sums.bin_edges, len(item_ids)),
            "n": sums.icc_answered.reshape(-1), "n_correct": sums.icc_correct.reshape(-1),
        })
        iccs.append(icc[icc["n"] > 0])
        options.append(pd.DataFrame({
            **labels, "item_id": np.repeat(item_ids, len(OPTION_MARKS)),
            "item_language": language, "option": np.tile(list(OPTION_MARKS), len(item_ids)),
            "n": sums.option_counts.reshape(-1),
        }))
        options_by_bin.append(_option_bin_frame(labels, item_ids, language, sums))
    return {
        "item_stats": pd.concat(stats, ignore_index=True) if stats else None,
        "item_icc": pd.concat(iccs, ignore_index=True) if iccs else None,
        "option_counts": pd.concat(options, ignore_index=True) if options else None,
        "option_theta_counts": (pd.concat(options_by_bin, ignore_index=True)
                                if options_by_bin else None),
    }


def _option_bin_frame(labels: dict, item_ids: np.ndarray, language, sums: _ItemSums
                      ) -> pd.DataFrame:
    """option_theta_counts rows of one population: candidates per (item, θ bin, mark), the
    empty cells left out."""
    n_bins, n_items, n_marks = sums.option_bins.shape
    frame = pd.DataFrame({
        **labels, "item_id": np.tile(np.repeat(item_ids, n_marks), n_bins),
        "item_language": language,
        "theta_bin": np.repeat(sums.bin_edges, n_items * n_marks),
        "option": np.tile(list(OPTION_MARKS), n_bins * n_items),
        "n": sums.option_bins.reshape(-1),
    })
    return frame[frame["n"] > 0]


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
        chosen = [(f, k) for f, k in zip(forms, keys_by_form, strict=True)
                  if f.language == language]
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
    n_rows = sum(len(piece) for key in keys_by_form for piece in accumulator.chars[key])
    chars = np.zeros((n_rows, len(item_ids)), np.uint8)
    keys = np.zeros(len(item_ids), np.uint8)
    thetas, totals, row = [], [], 0
    for form, key in zip(forms, keys_by_form, strict=True):
        placed = [(source, column_of[int(item)]) for source, item in enumerate(form.item_ids)
                  if int(item) in column_of]
        sources = np.array([source for source, _ in placed], np.intp)
        targets = np.array([target for _, target in placed], np.intp)
        keys[targets] = form.keys[sources]
        whole = np.array_equal(np.sort(targets), np.arange(len(item_ids)))
        for piece in accumulator.chars[key]:
            rows = slice(row, row + len(piece))
            if whole:  # the form holds every column: a permutation, taken straight in place
                np.take(piece, sources[np.argsort(targets)], axis=1, out=chars[rows],
                        mode="clip")  # "raise" would copy through a buffer
            else:
                chars[rows, targets] = piece[:, sources]
            row += len(piece)
        thetas.extend(accumulator.theta[key])
        totals.extend(accumulator.ctt[key])
    return chars, keys, np.concatenate(thetas), np.concatenate(totals)


@dataclass
class _ItemSums:
    """Per-item sums over one population, shapes (n_items,) unless stated.

    ``answered``/``correct``: candidates whose form held the item / who answered it correctly.
    ``moments``: the sums ``analytics.ctt.correlation_from_sums`` takes (count, Σx, Σx², Σy,
    Σy², Σxy; y the CTT total centred on its mean), over candidates with a finite total.
    ``low_*``/``high_*``: answered and correct in the bottom and top θ groups of the
    discrimination index (``analytics.ctt.rank_groups``); None when the groups are empty.
    ``icc_answered``/``icc_correct`` (n_bins, n_items): the same per θ bin of ICC_BIN_WIDTH
    whose lower edges are ``bin_edges``. ``option_counts`` (n_items, 7): candidates per mark of
    OPTION_MARKS (those without θ included). ``option_bins`` (n_bins, n_items, 7): the same per
    θ bin (candidates without θ left out), for option choices conditional on ability.
    """

    answered: np.ndarray
    correct: np.ndarray
    moments: tuple
    low_answered: np.ndarray | None
    low_correct: np.ndarray | None
    high_answered: np.ndarray | None
    high_correct: np.ndarray | None
    bin_edges: np.ndarray
    icc_answered: np.ndarray
    icc_correct: np.ndarray
    option_counts: np.ndarray
    option_bins: np.ndarray

    def discrimination_index(self) -> np.ndarray:
        """p(top group) − p(bottom group) per item; NaN without groups or answers."""
        low_answered, low_correct = self.low_answered, self.low_correct
        high_answered, high_correct = self.high_answered, self.high_correct
        # gather sets the four together: all arrays with groups, all None without.
        if (low_answered is None or low_correct is None or high_answered is None
                or high_correct is None):
            return np.full(self.answered.shape, np.nan)
        return ratio(high_correct, high_answered) - ratio(low_correct, low_answered)

    @classmethod
    def gather(cls, chars: np.ndarray, keys: np.ndarray, theta: np.ndarray, total: np.ndarray,
               di_fraction: float, chunk_rows: int) -> _ItemSums:
        """Sums of a population: ``chars`` (n, n_items) uint8 marks, 0 where the candidate's
        form lacked the item; ``keys`` (n_items,) uint8; ``theta`` and ``total`` (n,).

        Candidates are visited in θ-bin order, ``chunk_rows`` at a time (fewer when needed to
        keep the sums below): per chunk one matrix product gives every weighted sum at once:
        the weights are 1, the finite-total flag w, w·t, w·t² (t the total) and the two group
        flags. The product is taken in float32, where a chunk's sums, integers below 2**24,
        are exact; they are added up in float64, exact up to 2**53.
        """
        n_rows, n_items = chars.shape
        finite_total = np.isfinite(total)
        kept_total = np.where(finite_total, total, 0.0)
        groups = rank_groups(theta, di_fraction)
        no_group = np.zeros(n_rows, bool)
        low, high = groups if groups is not None else (no_group, no_group)
        # CTT totals are integers, so every weighted sum is an exact integer in float64,
        # whatever the chunking or BLAS's order of summation: the results are reproducible.
        weight_columns = [np.ones(n_rows), finite_total, kept_total, kept_total**2, low, high]
        binned = np.isfinite(theta)
        bins = np.floor(np.where(binned, theta, 0.0) / ICC_BIN_WIDTH).astype(np.int64)
        first_bin = int(bins[binned].min()) if binned.any() else 0
        n_bins = int(bins[binned].max()) - first_bin + 1 if binned.any() else 0
        # Rows without θ sort after every bin (index n_bins) and are left out of the ICC.
        bin_index = np.where(binned, bins - first_bin, n_bins).astype(np.uint16)
        order = np.argsort(bin_index, kind="stable")  # a radix sort on 16-bit keys
        weights = np.column_stack([column[order] for column in weight_columns]).astype(np.float32)
        bin_index = bin_index[order]
        largest = max(float(np.abs(kept_total).max(initial=0.0)) ** 2, 1.0)
        chunk_rows = max(1, min(chunk_rows, int(_FLOAT32_EXACT // largest)))
        complete = bool((chars != 0).all())
        codes = np.frombuffer(OPTION_MARKS.encode(), np.uint8)
        by_correct = np.zeros((len(weight_columns), n_items))
        by_answered = np.zeros((len(weight_columns), n_items))
        # One tally per (θ bin, item, slot) gives the option counts per θ bin, the ICC and the
        # option totals in one np.bincount per chunk (far cheaper than one pass per mark).
        slot_of = _mark_slots(codes)
        slot_bytes = slot_of.astype(np.uint8)
        n_cells = (n_bins + 1) * n_items * _SLOTS
        cell_type = np.int32 if n_cells < 2**31 else np.int64
        cell_base = ((np.arange(n_bins + 1)[:, None] * n_items + np.arange(n_items)[None, :])
                     * _SLOTS).astype(cell_type)
        tally = np.zeros(n_cells, np.int64)
        for start in range(0, n_rows, chunk_rows):
            chunk = slice(start, start + chunk_rows)
            block, chunk_bins = chars[order[chunk]], bin_index[chunk]
            chunk_weights = weights[chunk]
            answered = block != 0
            correct = (block == keys[None, :]) & answered
            by_correct += chunk_weights.T @ correct.astype(np.float32)
            if not complete:
                by_answered += chunk_weights.T @ answered.astype(np.float32)
            cells = np.take(cell_base, chunk_bins, axis=0)
            # np.take on a byte table: half the time of indexing with the uint8 marks
            cells += np.take(slot_bytes, block)
            tally += np.bincount(cells.ravel(), minlength=n_cells)
        tally = tally.reshape(n_bins + 1, n_items, _SLOTS)
        binned_tally = tally[:n_bins]
        icc_answered = binned_tally.sum(axis=2) - binned_tally[:, :, _ABSENT_SLOT]
        key_slots = slot_of[keys]
        scorable = key_slots < len(codes)  # a key outside the marks (annulled 'X') is never met
        icc_correct = np.where(scorable, binned_tally[:, np.arange(n_items),
                                                      np.where(scorable, key_slots, 0)], 0)
        if complete:  # every candidate answered every item: the weighted sums are constant
            by_answered[:] = np.array([column.sum() for column in weight_columns])[:, None]
        count, sum_x, sum_xt = by_answered[1], by_correct[1], by_correct[2]
        sum_t, sum_tt = by_answered[2], by_answered[3]
        # Centre the total on its mean before the moments meet in the correlation.
        shift = total[finite_total].mean() if finite_total.any() else 0.0
        moments = (count, sum_x, sum_x,  # x is 0/1, so Σx² = Σx
                   sum_t - shift * count, sum_tt - 2 * shift * sum_t + shift**2 * count,
                   sum_xt - shift * sum_x)
        has_groups = groups is not None
        return cls(
            answered=by_answered[0].astype(np.int64), correct=by_correct[0],
            moments=moments,
            low_answered=by_answered[4] if has_groups else None,
            low_correct=by_correct[4] if has_groups else None,
            high_answered=by_answered[5] if has_groups else None,
            high_correct=by_correct[5] if has_groups else None,
            bin_edges=(first_bin + np.arange(n_bins)) * ICC_BIN_WIDTH,
            icc_answered=icc_answered, icc_correct=icc_correct,
            option_counts=tally[:, :, :len(codes)].sum(axis=0),
            option_bins=binned_tally[:, :, :len(codes)],
        )


#: Integers up to this are exact in float32 (its 24-bit significand).
_FLOAT32_EXACT = 2**24
#: Tally slots per (θ bin, item): one per mark of OPTION_MARKS, then the two below.
_ABSENT_SLOT = len(OPTION_MARKS)  # the candidate's form lacks the item (byte 0)
_OTHER_SLOT = len(OPTION_MARKS) + 1  # any other byte (the ingest rejects such strings)
_SLOTS = len(OPTION_MARKS) + 2


def _mark_slots(codes: np.ndarray) -> np.ndarray:
    """(256,) int32: the tally slot of each byte (its index in OPTION_MARKS, else the two
    slots above)."""
    slot_of = np.full(256, _OTHER_SLOT, np.int32)
    slot_of[codes] = np.arange(len(codes))
    slot_of[0] = _ABSENT_SLOT
    return slot_of
