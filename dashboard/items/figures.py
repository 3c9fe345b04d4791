"""The Item gaps page's two figures: the machines' standardized residual per item in booklet
order, and the machines' item difficulties against the humans'."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analytics.items.gaps import MARKED_RESIDUAL
from dashboard.palette import HUMAN_COLOUR, OKABE_ITO, REFERENCE_COLOUR

#: Bar colours by direction: blue where the machines do better than the curve, vermillion
#: where worse, grey in between (Okabe–Ito, readable by colour-blind readers).
DIRECTION_COLOURS = {"easier": OKABE_ITO[4], "harder": OKABE_ITO[5], "": HUMAN_COLOUR}
_MARK_LINE = {"color": REFERENCE_COLOUR, "width": 1, "dash": "dash"}


def residual_figure(rows: pd.DataFrame, title: str, z_lines: bool) -> go.Figure:
    """One bar per item (x: its number in the booklet) of the pooled residual z, coloured by
    the rows' direction, dashed at ±:data:`MARKED_RESIDUAL` when ``z_lines`` (the marks follow
    z); hover: the item, observed and expected correct rates, the humans near the machines' θ.
    ``rows``: one series of ``workflows.items.gaps.gap_table``."""
    ordered = rows.sort_values("position")
    figure = go.Figure(go.Bar(
        x=ordered["position"], y=ordered["residual"],
        marker={"color": [DIRECTION_COLOURS[d] for d in ordered["direction"]]},
        customdata=np.column_stack([ordered["item_id"], ordered["observed"],
                                    ordered["expected"], ordered["humans_near"],
                                    ordered["answers"], ordered["b"]]),
        hovertemplate=("Q%{x} · item %{customdata[0]}<br>b = %{customdata[5]:.2f}"
                       "<br>machines right %{customdata[1]:.0%} of %{customdata[4]} answers"
                       "<br>3PL at their θ: %{customdata[2]:.0%}"
                       "<br>humans near their θ: %{customdata[3]:.0%}"
                       "<br>z = %{y:.2f}<extra></extra>"),
        showlegend=False))
    for level in (MARKED_RESIDUAL, -MARKED_RESIDUAL) if z_lines else ():
        figure.add_hline(y=level, line=_MARK_LINE)
    figure.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left"}, height=380, bargap=0.15,
        margin={"t": 60, "b": 50, "l": 60, "r": 20}, plot_bgcolor="white",
        meta={"figure": "item-residuals"},
        xaxis={"title": {"text": "item (its number in the exam)"}, "dtick": 5,
               "showgrid": False, "linecolor": "#999999"},
        yaxis={"title": {"text": "z (observed − 3PL expected, standardized)"},
               "zeroline": True, "zerolinecolor": "#999999", "gridcolor": "#eeeeee"})
    return figure


def calibration_figure(table: pd.DataFrame, title: str) -> go.Figure:
    """Each item's difficulty calibrated on the machines (linked to the humans' scale, with
    ±1.96 SE bars) against INEP's b, and the identity line. ``table``:
    ``workflows.items.calibration.MachineCalibration.table`` plus ``se_linked``."""
    known = table[np.isfinite(table["b_machines_linked"]) & np.isfinite(table["b_humans"])]
    # Both axes span the points (not their error bars, which a tiny machine population makes
    # many units long), with the same range so the identity line is the diagonal.
    low = float(np.nanmin(np.r_[known["b_humans"], known["b_machines_linked"], -1.0])) - 0.5
    high = float(np.nanmax(np.r_[known["b_humans"], known["b_machines_linked"], 1.0])) + 0.5
    figure = go.Figure()
    figure.add_trace(go.Scatter(x=[low, high], y=[low, high], mode="lines", name="same b",
                                line=_MARK_LINE, hoverinfo="skip"))
    figure.add_trace(go.Scatter(
        x=known["b_humans"], y=known["b_machines_linked"], mode="markers",
        name="items", marker={"color": OKABE_ITO[0], "size": 8},
        error_y={"type": "data", "array": 1.96 * known["se_linked"], "visible": True,
                 "color": "#bbbbbb", "thickness": 1},
        customdata=np.column_stack([known["position"], known["item_id"],
                                    known["b_difference"]]),
        hovertemplate=("Q%{customdata[0]} · item %{customdata[1]}<br>b humans %{x:.2f}"
                       "<br>b machines (linked) %{y:.2f}<br>difference %{customdata[2]:+.2f}"
                       "<extra></extra>")))
    figure.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left"}, height=460,
        margin={"t": 60, "b": 50, "l": 60, "r": 20}, plot_bgcolor="white",
        meta={"figure": "machine-calibration"},
        legend={"orientation": "h", "y": -0.18},
        xaxis={"title": {"text": "b, INEP's calibration on humans"}, "gridcolor": "#eeeeee",
               "range": [low, high]},
        yaxis={"title": {"text": "b, calibrated on the machines (linked)"},
               "gridcolor": "#eeeeee", "range": [low, high]})
    return figure
