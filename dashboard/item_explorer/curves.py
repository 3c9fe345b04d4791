"""The Item explorer's curve figure: the item's 3PL characteristic curve P(θ) and its
information I(θ) side by side, with the humans' share correct per θ bin (grey dots, size ~
candidates) and each model series at its mean θ and share of repetitions right.

An abandoned item has no a, b, c: both panels say so instead of a curve. Pure: frames in,
figure, numbers and caption out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import THETA_TITLE, series_styles
from dashboard.palette import HUMAN_COLOUR, OKABE_ITO, with_alpha
from dashboard.summaries import THETA_GRID, item_curves
from enem.item_statistics import ICC_BIN_WIDTH

#: The θ range of both panels (logits).
THETA_RANGE = (-4, 4)
ABANDONED_NOTE = "abandoned by INEP: no IRT parameters, no curve"


@dataclass(frozen=True)
class CurveFigure:
    """The figure and the numbers behind it (``data``: the model curve on
    :data:`THETA_GRID`, the humans' bins and the models' points, with a ``kind`` column)."""

    figure: go.Figure
    data: pd.DataFrame


def _abandoned_panels(figure: go.Figure) -> None:
    """No curve: said in both panels, top left of the curve's (clear of the humans' dots, which
    climb to the right), across the middle of the information's."""
    # An invisible trace keeps the information panel's axes (plotly draws none without one).
    figure.add_trace(go.Scatter(x=list(THETA_RANGE), y=[0, 0], mode="lines", showlegend=False,
                                hoverinfo="skip", line={"color": "rgba(0,0,0,0)"}), row=1, col=2)
    figure.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, row=1, col=2)
    for column, x, y, anchor in ((1, 0.02, 0.98, "left"), (2, 0.5, 0.5, "center")):
        axis = figure.get_subplot(1, column).xaxis.plotly_name.replace("axis", "")
        figure.add_annotation(text=ABANDONED_NOTE, showarrow=False, xref=f"{axis} domain",
                              yref=f"y{axis[1:]} domain", x=x, y=y, xanchor=anchor,
                              font={"size": 12, "color": "#555555"})


def _model_curves(figure: go.Figure, item: pd.Series) -> pd.DataFrame:
    """The 3PL P(θ) (left) and I(θ) (right) of ``item``'s a, b, c on :data:`THETA_GRID`."""
    p, info = item_curves(item["a"], item["b"], item["c"])
    figure.add_trace(go.Scatter(
        x=THETA_GRID, y=p, name="3PL P(θ)", line={"color": OKABE_ITO[0], "width": 2},
        hovertemplate="θ %{x:.2f}: P = %{y:.3f}<extra></extra>"), row=1, col=1)
    figure.add_trace(go.Scatter(
        x=THETA_GRID, y=info, name="information I(θ)", line={"color": OKABE_ITO[5], "width": 2},
        hovertemplate="θ %{x:.2f}: I = %{y:.3f}<extra></extra>"), row=1, col=2)
    return pd.DataFrame({"kind": "model curve", "theta": THETA_GRID, "p": p,
                         "information": info})


def _human_bins(figure: go.Figure, empirical: pd.DataFrame) -> pd.DataFrame:
    """The share of candidates right in each θ bin (``item_icc``: theta_bin lower edge, n,
    n_correct), at the bin's centre, dot size ~ √candidates."""
    share = empirical["n_correct"] / empirical["n"]
    centre = empirical["theta_bin"] + ICC_BIN_WIDTH / 2
    figure.add_trace(go.Scatter(
        x=centre, y=share, mode="markers", name="humans: proportion correct",
        marker={"color": with_alpha(HUMAN_COLOUR, 0.8),
                "size": np.clip(np.sqrt(empirical["n"]) / 2, 4, 18)},
        customdata=empirical[["n", "n_correct"]].to_numpy(),
        hovertemplate=(f"θ bin from %{{x:.2f}}−{ICC_BIN_WIDTH / 2:g}: %{{y:.1%}} correct<br>"
                       "%{customdata[1]:,} of %{customdata[0]:,} candidates<extra></extra>"),
    ), row=1, col=1)
    return empirical.assign(kind="humans", theta=centre, p=share)


def _model_points(figure: go.Figure, model_theta: pd.DataFrame,
                  series_order: Sequence[str]) -> pd.DataFrame:
    """Each series at its mean θ and share of repetitions right (``model_item_theta``)."""
    styles = series_styles(model_theta["model"], series_order)
    for row in model_theta.itertuples():
        colour, symbol = styles[row.model]
        figure.add_trace(go.Scatter(
            x=[row.mean_theta], y=[row.fraction_correct], mode="markers", name=row.model,
            marker={"color": colour, "symbol": symbol, "size": 12,
                    "line": {"color": "black", "width": 1}},
            # A series right every time (or never) sits on the axis's end: draw it whole.
            cliponaxis=False,
            hovertemplate=(f"<b>{row.model}</b><br>mean θ = %{{x:.3f}}<br>correct in "
                           f"%{{y:.0%}} of {row.patterns} patterns<extra></extra>"),
        ), row=1, col=1)
    return model_theta.assign(kind="model", theta=model_theta["mean_theta"],
                              p=model_theta["fraction_correct"])


def curve_figure(item: pd.Series, empirical: pd.DataFrame, model_theta: pd.DataFrame,
                 series_order: Sequence[str]) -> CurveFigure:
    """The characteristic curve and information of ``item`` (a row of ``area_items``), with
    the humans' bins (``item_icc``) and the models' points (``model_item_theta``);
    ``series_order``: the database's series labels, for their colours."""
    figure = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                           subplot_titles=["Item characteristic curve", "Item information"])
    export = []
    if item["abandoned"]:
        _abandoned_panels(figure)
    else:
        export.append(_model_curves(figure, item))
    if len(empirical):
        export.append(_human_bins(figure, empirical))
    if len(model_theta):
        export.append(_model_points(figure, model_theta, series_order))
    figure.update_xaxes(title_text=THETA_TITLE, range=list(THETA_RANGE))
    figure.update_yaxes(title_text="probability correct", range=[-0.04, 1.06],
                        tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1], row=1, col=1)
    figure.update_yaxes(title_text="Fisher information", row=1, col=2)
    figure.update_layout(height=420, margin={"t": 60, "b": 50, "l": 60, "r": 20},
                         legend={"orientation": "h", "yanchor": "bottom", "y": 1.08, "x": 0})
    return CurveFigure(figure, pd.concat(export, ignore_index=True) if export else pd.DataFrame())


def curve_caption(with_humans: bool, with_models: bool, prompt_label: str,
                  provenance: str) -> str:
    """The caption: what the curve, the grey dots (``with_humans``: some candidate's answer
    stored) and the coloured markers (``with_models``: some selected run answered) are."""
    return ("Left: the 3PL curve from INEP's a/b/c, "
            + (f"grey dots = share of candidates in each {ICC_BIN_WIDTH:g}-wide θ bin who got "
               "it right (dot size ~ candidates), " if with_humans else
               "no grey dots (no candidate's answer to this item is stored), ")
            + "coloured markers = each model's mean θ and share of its repetitions right "
            f"({prompt_label}"
            + ("" if with_models else "; none: no selected run answered this item")
            + "). Right: how much the item tells about θ at each ability."
            + provenance)
