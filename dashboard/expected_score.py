"""The test characteristic curve (expected number correct at each θ) of each area's booklet,
drawn over the humans and models of Accuracy vs ability: where the grey cloud and a model's
points leave the curve, CTT and θ disagree about the examinee."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analytics.reliability import test_characteristic_curve
from dashboard import queries
from dashboard.figures import panel
from dashboard.information.figure import lc_default_language
from dashboard.palette import REFERENCE_COLOUR
from dashboard.state.filters import Filters
from dashboard.state.selection import information_booklet
from dashboard.summaries import THETA_GRID
from enem.items import stored_item_bank
from enem.scoring import ScoringOptions

#: The legend entry of the curves.
CURVE_NAME = "expected CTT at θ (3PL test characteristic curve)"
_LINE = {"color": REFERENCE_COLOUR, "width": 1.5, "dash": "dot"}


def expected_score_curves(filters: Filters, points: pd.DataFrame
                          ) -> dict[str, tuple[int, np.ndarray]]:
    """Per area with a booklet (the one the test information uses; LC in the runs' foreign
    language): (booklet, expected number correct over ``THETA_GRID``), the sum of the 3PL
    probabilities of the items the CTT score counts, with the year's D."""
    scaling = ScoringOptions.from_stored(filters.profile.get("scoring")).scaling
    language = lc_default_language(points)
    curves = {}
    for area in filters.areas:
        booklet = information_booklet(filters, area)
        if booklet is None:
            continue
        items = queries.form_items(filters.year, booklet, language if area == "LC" else None)
        bank = stored_item_bank(items, scaling=scaling)
        curves[area] = (booklet, test_characteristic_curve(THETA_GRID, bank))
    return curves


def add_expected_score_lines(figure: go.Figure, areas: tuple[str, ...],
                             curves: dict[str, tuple[int, np.ndarray]]) -> None:
    """One dotted curve per area panel (the two-column grid of ``humans_and_models_figure``),
    one legend entry for all."""
    shown = False
    for index, area in enumerate(areas):
        if area not in curves:
            continue
        booklet, curve = curves[area]
        row, col = panel(index, 2)
        figure.add_trace(go.Scatter(
            x=THETA_GRID, y=curve, mode="lines", line=_LINE, name=CURVE_NAME,
            legendgroup="expected-score", showlegend=not shown,
            hovertemplate=(f"booklet {booklet}: θ %{{x:.2f}} → expected CTT %{{y:.1f}}"
                           "<extra></extra>")), row=row, col=col)
        shown = True
