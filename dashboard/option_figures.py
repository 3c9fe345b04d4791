"""The figures of the Options and traps page: distractor agreement, position bias and accuracy
by difficulty band. Humans are grey; each series keeps its colour (``series_styles``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analytics.options import DISTRACTOR_CHANCE, N_OPTIONS
from dashboard.figures import legend_above
from dashboard.option_data import BAND_NAMES, HUMANS
from dashboard.palette import HUMAN_COLOUR, REFERENCE_COLOUR, with_alpha

_HEIGHT = 420
_PLOT_HEIGHT = 300
_MARGIN = {"t": 90, "b": 50, "l": 60, "r": 20}


def _layout(figure: go.Figure, y_title: str, x_title: str) -> go.Figure:
    figure.update_layout(height=_HEIGHT, margin=_MARGIN, legend=legend_above(_PLOT_HEIGHT),
                         barmode="group")
    figure.update_yaxes(title_text=y_title)
    figure.update_xaxes(title_text=x_title)
    return figure


def p_text(p_value: float) -> str:
    """A p-value for labels: 'p < 0.001', 'p = 0.042', or '—' when undefined."""
    if not np.isfinite(p_value):
        return "—"
    return "p < 0.001" if p_value < 0.001 else f"p = {p_value:.3f}"


def distractor_figure(table: pd.DataFrame, styles: dict[str, tuple[str, str]]) -> go.Figure:
    """One horizontal bar per series: the share of its wrong answers that chose the humans' most
    chosen distractor, labelled with the count and the binomial test's p; a dashed line at
    chance (1/4)."""
    figure = go.Figure()
    for row in table.itertuples():
        colour = styles[row.series][0]
        figure.add_trace(go.Bar(
            y=[row.series], x=[row.share], name=row.series, orientation="h",
            marker_color=with_alpha(colour, 0.8),
            text=[f"{row.agreed}/{row.wrong_answers} · {p_text(row.p_value)}"],
            textposition="outside", cliponaxis=False, showlegend=False,
            hovertemplate=(f"{row.series}<br>{row.agreed} of {row.wrong_answers} wrong answers "
                           f"chose the humans' distractor ({row.share:.1%})<br>binomial test "
                           f"against 1/4: {p_text(row.p_value)}<extra></extra>")))
    figure.add_vline(x=DISTRACTOR_CHANCE, line={"color": REFERENCE_COLOUR, "dash": "dash",
                                                "width": 1},
                     annotation_text="chance (1/4)", annotation_position="top")
    figure.update_xaxes(range=[0, 1], tickformat=".0%",
                        title_text="wrong answers choosing the humans' most chosen distractor")
    figure.update_yaxes(autorange="reversed", automargin=True)
    figure.update_layout(height=120 + 44 * len(table), margin={"t": 40, "b": 50, "l": 20,
                                                                "r": 20})
    return figure


def position_figure(long: pd.DataFrame, tests: pd.DataFrame,
                    styles: dict[str, tuple[str, str]]) -> go.Figure:
    """Grouped bars: per shown position A–E, each series' share of answers that chose the option
    shown there; the legend gives each series' χ² p against uniform; a dashed line at 1/5."""
    figure = go.Figure()
    p_of = dict(zip(tests["series"], tests["p_value"]))
    for series, group in long.groupby("series", sort=False):
        colour = styles[series][0]
        figure.add_trace(go.Bar(
            x=group["position"], y=group["share"], name=f"{series} (χ² {p_text(p_of[series])})",
            marker_color=with_alpha(colour, 0.8),
            customdata=np.column_stack([group["chosen"], group["key"]]),
            hovertemplate=(f"{series}<br>shown as %{{x}}: %{{customdata[0]}} answers "
                           "(%{y:.1%})<br>key shown as %{x}: %{customdata[1]}<extra></extra>")))
    figure.add_hline(y=1 / N_OPTIONS, line={"color": REFERENCE_COLOUR, "dash": "dash",
                                            "width": 1},
                     annotation_text="uniform (1/5)", annotation_position="top left")
    figure.update_yaxes(rangemode="tozero", tickformat=".0%")
    return _layout(figure, "answers choosing the option shown there",
                   "position the chosen option was shown at")


def band_figure(bands: pd.DataFrame, styles: dict[str, tuple[str, str]]) -> go.Figure:
    """Accuracy per difficulty band, one line per series and a grey one for humans."""
    figure = go.Figure()
    for series, group in bands.groupby("series", sort=False):
        colour = HUMAN_COLOUR if series == HUMANS else styles[series][0]
        symbol = "square" if series == HUMANS else styles[series][1]
        figure.add_trace(go.Scatter(
            x=group["band"], y=group["accuracy"], name=series, mode="lines+markers",
            line={"color": colour, "width": 3 if series == HUMANS else 2},
            marker={"color": colour, "symbol": symbol, "size": 9},
            customdata=group["items"],
            hovertemplate=(f"{series}<br>%{{x}} items (%{{customdata}}): accuracy "
                           "%{y:.1%}<extra></extra>")))
    figure.update_xaxes(categoryorder="array", categoryarray=list(BAND_NAMES))
    figure.update_yaxes(range=[0, 1], tickformat=".0%")
    return _layout(figure, "accuracy (mean share correct per item)",
                   "difficulty band (thirds of each area's items by b)")
