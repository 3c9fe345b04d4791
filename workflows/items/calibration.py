"""Item parameters estimated on the machines: the selection's response patterns calibrated by
marginal maximum likelihood (:func:`analytics.items.calibration.calibrate`), put on the
humans' scale by mean/sigma linking on the difficulties, beside INEP's human calibration."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analytics.items.calibration import calibrate
from analytics.items.linking import mean_sigma
from workflows.items.selection import pattern_matrix

CALIBRATION_COLUMNS = ["item_id", "position", "skill", "a_humans", "b_humans", "c_humans",
                       "a_machines", "se_a_machines", "b_machines", "se_b_machines",
                       "b_machines_linked", "b_difference"]


@dataclass(frozen=True)
class MachineCalibration:
    """``table`` (:data:`CALIBRATION_COLUMNS`, items in booklet order; b_machines_linked = A·b
    + B on the humans' scale, b_difference = linked − humans), the linking constants A and B
    (NaN with fewer than two items calibrated on both sides), the patterns calibrated, the
    model ("2PL"/"3PL") and the fit's plain-English ``notes`` (too small a population,
    items without variance, no convergence)."""

    table: pd.DataFrame
    slope: float
    intercept: float
    patterns: int
    model: str
    notes: tuple[str, ...]


def machine_calibration(patterns: pd.DataFrame, items: pd.DataFrame, scaling: float = 1.0,
                        model: str = "2PL") -> MachineCalibration:
    """Calibrate the area's items on every pattern of the selection (each repetition one
    examinee, every selected run pooled into one machine population).

    ``patterns``: long pattern rows (``model_pattern_matrix``); ``items``: ``area_items``
    rows (item_id, first_position, skill, a, b, c); ``scaling``: the year's D, so the machines'
    a is on the same metric as INEP's.
    """
    ordered = items.sort_values("first_position")
    ids = ordered["item_id"].to_numpy(np.int64)
    correct, _, _ = pattern_matrix(patterns, ids)
    table = pd.DataFrame({
        "item_id": ids, "position": ordered["first_position"].to_numpy(),
        "skill": ordered["skill"].to_numpy(), "a_humans": ordered["a"].to_numpy(np.float64),
        "b_humans": ordered["b"].to_numpy(np.float64),
        "c_humans": ordered["c"].to_numpy(np.float64)})
    if not len(correct):
        empty = table.assign(**{column: np.nan for column in CALIBRATION_COLUMNS[6:]})
        return MachineCalibration(empty[CALIBRATION_COLUMNS], math.nan, math.nan, 0, model,
                                  ("no model response patterns in the selection",))
    fit = calibrate(correct, model=model, scaling=scaling)
    # An estimate at its bound (no SE) is no estimate: left out of the table and the linking.
    estimated = np.isfinite(fit.se_b)
    table["a_machines"] = np.where(estimated, fit.bank.a, np.nan)
    table["se_a_machines"] = fit.se_a
    table["b_machines"] = np.where(estimated, fit.bank.b, np.nan)
    table["se_b_machines"] = fit.se_b
    both = np.isfinite(table["b_machines"]) & np.isfinite(table["b_humans"])
    slope = intercept = math.nan
    if both.sum() >= 2:
        slope, intercept = mean_sigma(table["b_machines"], table["b_humans"])
    table["b_machines_linked"] = slope * table["b_machines"] + intercept
    table["b_difference"] = table["b_machines_linked"] - table["b_humans"]
    return MachineCalibration(table[CALIBRATION_COLUMNS], slope, intercept, len(correct), model,
                              _named_notes(fit.warnings, table["position"].to_numpy()))


def _named_notes(notes: tuple[str, ...], positions: np.ndarray) -> tuple[str, ...]:
    """The fit's notes with 'item 7' (a column index) read as the item's question number, and
    the one-per-item notes of estimates at a bound gathered into one sentence."""
    def named(match: re.Match) -> str:
        listed = ", ".join(f"Q{positions[int(index)]}" for index in match.group(2).split(", "))
        return f"{match.group(1)} {listed}"
    renamed = [re.sub(r"\b(item(?:\(s\))?) (\d+(?:, \d+)*)", named, note) for note in notes]
    bound = [note.split(":")[0].removeprefix("item ") for note in renamed
             if re.match(r"item Q\d+: an estimate reached its bound", note)]
    kept = [note for note in renamed
            if not re.match(r"item Q\d+: an estimate reached its bound", note)]
    if bound:
        kept.append(f"{len(bound)} item{'s' * (len(bound) > 1)} ({', '.join(bound)}) "
                    "have no finite estimate: their answers separate perfectly or look like "
                    "pure guessing, so they are not drawn")
    return tuple(kept)
