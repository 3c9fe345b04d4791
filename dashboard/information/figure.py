"""The Test information figure: per area, the exam's information I(θ) and SE(θ) above one row
per model showing its θ over repetitions and its mean θ with the chosen 95% interval.

An exam is built for the human population: its information I(θ) peaks where most candidates
are. A model whose θ lies where I(θ) is low gets a wide interval — its score says little.

Layout: blocks of ``columns`` areas; a block is an information panel row (I(θ) left axis,
SE(θ) right axis), a model-row row sharing its θ axis, and a spacer row before the next block
(so the gap inside a block is narrow and the gap between blocks wide). Green bands mark where
SE(θ) ≤ the page's threshold. :func:`area_information` reads the curves; the rest is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analytics.populations import Z_95
from dashboard import queries
from dashboard.figures import THETA_TITLE, area_title, legend_above, series_styles
from dashboard.information.intervals import INTERVAL_BOUNDS, INTERVALS, PAPER_AMBIGUITY
from dashboard.palette import HUMAN_COLOUR, INFORMATIVE_FILL, REFERENCE_COLOUR, with_alpha
from dashboard.summaries import (
    THETA_GRID,
    information_curves,
    information_verdict,
    informative_intervals,
)

#: Longest series name that still fits beside a second column of panels.
SHORT_NAME = 24
#: Pixels of an area's information panel, and of one model row (a lane): the model rows are
#: as tall as their lanes, so no empty band opens between the panel and few models.
PANEL_PX, LANE_PX = 300, 28
#: Pixels between a panel and its model rows (they share the θ axis), and between a block's
#: θ-axis title and the next block's panel titles.
INNER_GAP_PX, BLOCK_GAP_PX = 14, 110
REPETITIONS_NAME = "θ of each repetition"
#: SE(θ) is drawn up to this value (logits): beyond it the curve leaves the right axis.
SE_CLIP = 3.0


@dataclass(frozen=True)
class AreaInformation:
    """One area's exam: the ``booklet`` whose items give the curves, and on
    :data:`dashboard.summaries.THETA_GRID` its ``information`` I(θ) and ``se`` = 1/√I(θ)
    (both of shape (len(THETA_GRID),))."""

    booklet: int
    information: np.ndarray
    se: np.ndarray


@dataclass(frozen=True)
class InformationFigure:
    """The figure, the numbers behind it and what its caption and verdict table need.

    ``curves``: one frame per drawn area (area, booklet_id, theta, information, se);
    ``verdicts``: one dict per (model, area) drawn (see :func:`_model_rows`); ``columns`` and
    ``label_right``: the grid's columns and whether the right column names its model rows.
    """

    figure: go.Figure
    curves: list[pd.DataFrame] = field(default_factory=list)
    verdicts: list[dict] = field(default_factory=list)
    columns: int = 1
    label_right: bool = True


@dataclass(frozen=True)
class _Layout:
    """The subplot grid: ``columns`` areas per block, ``blocks`` blocks, and per subplot row its
    height in px, spec and titles."""

    columns: int
    blocks: int
    longest: int
    label_right: bool
    heights: list[int]
    specs: list[list[dict]]
    titles: list[str]

    @property
    def plot_height(self) -> int:
        """Pixels of the plotting area: the rows and the gaps between them."""
        return sum(self.heights) + INNER_GAP_PX * (len(self.heights) - 1)


def area_information(year: int, booklets: Mapping[str, int | None], lc_language: int
                     ) -> dict[str, AreaInformation]:
    """Each area's information curve from the items of its booklet (``booklets``: area → the
    booklet the page draws, None for none); LC with the foreign-language items of
    ``lc_language`` (``TP_LINGUA``: 0 English, 1 Spanish). Areas without a booklet are left
    out."""
    curves = {}
    for area, booklet in booklets.items():
        if booklet is None:
            continue
        items = queries.form_items(year, booklet, lc_language if area == "LC" else None)
        information, se = information_curves(items)
        curves[area] = AreaInformation(booklet, information, se)
    return curves


def lc_default_language(points: pd.DataFrame) -> int:
    """The LC foreign language (``TP_LINGUA``: 0 English, 1 Spanish) of most of the models' LC
    repetitions in ``points``, else 0: what the page's LC picker opens on."""
    lc_models = points.loc[points["area"] == "LC", "item_language"].dropna() if len(points) else []
    return int(pd.Series(lc_models).mode().iloc[0]) if len(lc_models) else 0


def _layout(areas: Sequence[str], points: pd.DataFrame) -> _Layout:
    """The grid of ``areas``: two columns where the series names fit, else one."""
    # Series names are long ("llama2-13b · few-shot · 30 seeds"): beside a second column of
    # panels they would run into it. When every area has the same model rows, the right
    # column's rows are unlabelled (they read as the left's), which keeps two columns and half
    # the height (four stacked areas were squeezed unreadable on a 1280×720 slide); otherwise
    # long names get one.
    longest = max((len(name) for name in points["model"].unique()), default=0) if len(points) else 0
    lanes = points["model"].nunique() if len(points) else 0
    models_px = LANE_PX * max(1, lanes)
    same_rows = len(points) == 0 or all(
        points.loc[points["area"] == area, "model"].nunique() == lanes for area in areas)
    columns = 2 if len(areas) > 1 and (longest <= SHORT_NAME or same_rows) else 1
    blocks = -(-len(areas) // columns)
    # Rows per block: information panel, model rows, then an empty spacer row (none after the
    # last block), so the gap inside a block is narrow and the gap between blocks is wide.
    heights: list[int] = []
    specs: list[list[dict]] = []
    titles: list[str] = []
    for block in range(blocks):
        names = areas[block * columns:(block + 1) * columns]
        if block:
            heights.append(BLOCK_GAP_PX)
            specs.append([{}] * columns)
            titles += [""] * columns
        heights += [PANEL_PX, models_px]
        specs += [[{"secondary_y": True}] * columns, [{}] * columns]
        titles += [area_title(a) for a in names] + [""] * (columns - len(names)) + [""] * columns
    return _Layout(columns, blocks, longest, longest <= SHORT_NAME, heights, specs, titles)


def _grid(layout: _Layout) -> go.Figure:
    """The empty subplot grid, its spacer rows hidden."""
    figure = make_subplots(rows=len(layout.heights), cols=layout.columns, specs=layout.specs,
                           subplot_titles=layout.titles,
                           vertical_spacing=INNER_GAP_PX / layout.plot_height,
                           horizontal_spacing=0.2 if layout.label_right else 0.15,
                           row_heights=layout.heights)
    for block in range(1, layout.blocks):
        for col in range(1, layout.columns + 1):
            figure.update_xaxes(visible=False, row=3 * block, col=col)
            figure.update_yaxes(visible=False, row=3 * block, col=col)
    return figure


def _information_panel(figure: go.Figure, curve: AreaInformation, bands: list,
                       top: int, col: int, columns: int, first: bool) -> None:
    """I(θ) and SE(θ) of one area in its panel (row ``top``), the informative bands over the
    panel and its model rows, and the shared θ axis."""
    figure.add_trace(go.Scatter(x=THETA_GRID, y=curve.information, name="information I(θ)",
                                line={"color": REFERENCE_COLOUR, "width": 2}, legendgroup="I",
                                showlegend=first,
                                hovertemplate="θ %{x:.2f}: I = %{y:.2f}<extra></extra>"),
                     row=top, col=col, secondary_y=False)
    figure.add_trace(go.Scatter(x=THETA_GRID, y=np.minimum(curve.se, SE_CLIP),
                                name="SE(θ) = 1/√I",
                                line={"color": HUMAN_COLOUR, "width": 2, "dash": "dot"},
                                legendgroup="SE", showlegend=first,
                                hovertemplate="θ %{x:.2f}: SE = %{y:.3f}<extra></extra>"),
                     row=top, col=col, secondary_y=True)
    for low, high in bands:
        for row in (top, top + 1):
            figure.add_vrect(x0=low, x1=high, fillcolor=INFORMATIVE_FILL, line_width=0,
                             layer="below", row=row, col=col)
    # Axis titles on the outer sides only: between two columns the left panel's SE(θ) title
    # and the right panel's I(θ) title fell on one another.
    figure.update_yaxes(title_text="I(θ)" if col == 1 else "", row=top, col=col,
                        secondary_y=False)
    figure.update_yaxes(title_text="SE(θ)" if col == columns else "", range=[0, 1.5],
                        tickmode="auto",
                        showgrid=False, row=top, col=col, secondary_y=True)
    # The panel and its model rows share one θ axis; only the model rows show its ticks.
    shared = figure.get_subplot(top + 1, col).xaxis.plotly_name.replace("axis", "")
    figure.update_xaxes(matches=shared, showticklabels=False, row=top, col=col)
    figure.update_xaxes(title_text=THETA_TITLE, range=[THETA_GRID[0], THETA_GRID[-1]],
                        row=top + 1, col=col)


def _model_rows(figure: go.Figure, area: str, curve: AreaInformation, bands: list,
                in_area: pd.DataFrame, intervals_table: pd.DataFrame, interval: str,
                styles: Mapping[str, tuple[str, str]], legend_shown: set[str],
                row: int, col: int) -> list[dict]:
    """One row per model of ``area``: its θ per repetition (faint) and its mean θ with the
    ``interval`` drawn; returns the verdict of each model (model, area, booklet, repetitions,
    mean_theta, the drawn interval's bounds, exam_se_at_theta, verdict, the other bounds)."""
    interval_name = INTERVALS[interval][0]
    low_column, high_column = INTERVAL_BOUNDS[interval]
    verdicts = []
    for model, group in (in_area.groupby("model", sort=True) if len(in_area) else []):
        colour, symbol = styles[model]
        summary = intervals_table.loc[(model, area)]
        mean_theta, low, high = summary["mean_theta"], summary[low_column], summary[high_column]
        own = Z_95 * group["theta_se"].to_numpy(float)
        figure.add_trace(go.Scatter(
            x=group["theta"], y=[model] * len(group), mode="markers", showlegend=False,
            marker={"color": with_alpha(colour, 0.45), "size": 5, "symbol": symbol},
            error_x=({"type": "data", "array": own, "color": with_alpha(colour, 0.35),
                      "thickness": 1, "width": 0} if interval == "pattern_se" else None),
            legendgroup=model, customdata=group[["shuffle", "theta_se", "lz", "ctt"]]
            .to_numpy(object), name=f"{model}: {REPETITIONS_NAME}",
            hovertemplate=(f"<b>{model}</b> shuffle %{{customdata[0]}}<br>θ = %{{x:.3f}} "
                           "(SE %{customdata[1]:.3f})<br>l_z %{customdata[2]:.2f} · CTT "
                           "%{customdata[3]}<extra></extra>")), row=row, col=col)
        ci_words = (f"{interval_name} [{low:.3f}, {high:.3f}]" if np.isfinite(low)
                    else f"one repetition: no {interval_name}")
        figure.add_trace(go.Scatter(
            x=[mean_theta], y=[model], mode="markers", name=model, legendgroup=model,
            showlegend=model not in legend_shown,
            marker={"color": colour, "size": 8, "symbol": symbol,
                    "line": {"color": "black", "width": 1}},
            error_x={"type": "data", "symmetric": False,
                     "array": [high - mean_theta if np.isfinite(high) else 0.0],
                     "arrayminus": [mean_theta - low if np.isfinite(low) else 0.0],
                     "color": colour, "thickness": 2, "width": 6},
            hovertemplate=(f"<b>{model}</b><br>mean θ = %{{x:.3f}} over "
                           f"{int(summary['repetitions'])} repetitions<br>{ci_words}"
                           "<extra></extra>")), row=row, col=col)
        legend_shown.add(model)
        se_here = float(np.interp(mean_theta, THETA_GRID, curve.se))
        # The drawn interval and the verdict first; the other two intervals after them.
        verdicts.append({"model": model, "area": area, "booklet": curve.booklet,
                         "repetitions": int(summary["repetitions"]), "mean_theta": mean_theta,
                         low_column: low, high_column: high, "exam_se_at_theta": se_here,
                         "verdict": information_verdict(mean_theta, low, high, bands,
                                                        se_here),
                         **{column: summary[column] for pair in INTERVAL_BOUNDS.values()
                            for column in pair if pair != (low_column, high_column)}})
    return verdicts


def _model_axis(figure: go.Figure, area: str, in_area: pd.DataFrame, layout: _Layout,
                row: int, col: int) -> None:
    """The model rows' category axis; an area without models says so in its empty row."""
    # Every series named, even when plotly would thin out crowded category labels; half a lane
    # of room above the first and below the last, none more.
    names = sorted(in_area["model"].unique()) if len(in_area) else []
    figure.update_yaxes(title_text="model" if layout.longest <= SHORT_NAME and names else "",
                        row=row, col=col, type="category", tickmode="array",
                        tickvals=names, range=[-0.5, max(1, len(names)) - 0.5],
                        showticklabels=col == 1 or layout.label_right)
    if not names:
        # An empty row still draws its θ axis (plotly leaves out the axes of a subplot without
        # a trace) and says why it is empty, in its own axes' coordinates.
        figure.add_trace(go.Scatter(x=[None], y=[None], showlegend=False, hoverinfo="skip"),
                         row=row, col=col)
        lane_axes = figure.get_subplot(row, col)
        figure.add_annotation(
            text=f"no model runs in {area} in this selection", showarrow=False,
            font={"size": 12, "color": "#555555"}, x=0.5, y=0.5,
            xref=lane_axes.xaxis.plotly_name.replace("axis", "") + " domain",
            yref=lane_axes.yaxis.plotly_name.replace("axis", "") + " domain")
        figure.update_yaxes(showticklabels=False, row=row, col=col)


def _legend_glyphs(figure: go.Figure, interval: str, with_models: bool) -> None:
    """The two glyphs of every model row, explained once in the legend."""
    figure.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=REPETITIONS_NAME,
                                marker={"color": with_alpha(HUMAN_COLOUR, 0.45), "size": 5},
                                legendgroup="repetitions", showlegend=with_models),
                     row=2, col=1)
    figure.add_trace(go.Scatter(x=[None], y=[None], mode="markers",
                                name=f"mean θ, {INTERVALS[interval][0]}",
                                marker={"color": HUMAN_COLOUR, "size": 8,
                                        "line": {"color": "black", "width": 1}},
                                error_x={"type": "constant", "value": 0.2, "color": HUMAN_COLOUR,
                                         "thickness": 2, "width": 6},
                                legendgroup="ci", showlegend=with_models), row=2, col=1)


def information_figure(areas: Sequence[str], curves: Mapping[str, AreaInformation],
                       points: pd.DataFrame, intervals_table: pd.DataFrame, interval: str,
                       max_se: float, series_order: Sequence[str]) -> InformationFigure:
    """The whole figure for ``areas`` in order.

    ``curves``: :func:`area_information` (an area without one is left blank); ``points``: one
    row per model repetition (``selected_model_points``: model, area, theta, theta_se, shuffle,
    lz, ctt); ``intervals_table``: :func:`~dashboard.information.intervals.theta_intervals`
    indexed by (model, area); ``interval``: the key of :data:`INTERVALS` drawn; ``max_se``:
    the SE(θ) (logits) at most which the exam counts as informative (green bands);
    ``series_order``: the database's series labels, for their colours.
    """
    layout = _layout(areas, points)
    figure = _grid(layout)
    styles = series_styles(points["model"].unique(), series_order) if len(points) else {}
    drawn = InformationFigure(figure, columns=layout.columns, label_right=layout.label_right)
    legend_shown: set[str] = set()
    for index, area in enumerate(areas):
        top, col = 3 * (index // layout.columns) + 1, index % layout.columns + 1
        curve = curves.get(area)
        if curve is None:
            continue
        bands = informative_intervals(THETA_GRID, curve.se <= max_se)
        drawn.curves.append(pd.DataFrame({"area": area, "booklet_id": curve.booklet,
                                          "theta": THETA_GRID, "information": curve.information,
                                          "se": curve.se}))
        _information_panel(figure, curve, bands, top, col, layout.columns, index == 0)
        in_area = points[points["area"] == area] if len(points) else points
        drawn.verdicts.extend(_model_rows(figure, area, curve, bands, in_area, intervals_table,
                                          interval, styles, legend_shown, top + 1, col))
        _model_axis(figure, area, in_area, layout, top + 1, col)
    _legend_glyphs(figure, interval, len(points) > 0)
    figure.update_layout(height=layout.plot_height + 130,
                         margin={"t": 70, "b": 60, "l": 60, "r": 20},
                         legend=legend_above(layout.plot_height))
    return drawn


def information_numbers(drawn: InformationFigure, intervals_table: pd.DataFrame) -> pd.DataFrame:
    """The figure's CSV: the curves drawn, then each model's intervals (kind 'model θ')."""
    return pd.concat([*drawn.curves, intervals_table.reset_index().assign(kind="model θ")],
                     ignore_index=True)


def information_caption(drawn: InformationFigure, interval: str, max_se: float,
                        prompt_label: str, with_models: bool, provenance: str) -> str:
    """The figure's caption: what the panels and rows show, which interval is drawn, the
    green bands' threshold and the page's provenance."""
    interval_name, interval_words = INTERVALS[interval]
    return ("Top: test information I(θ) (solid) and SE(θ) = 1/√I(θ) (dotted, right axis) of "
            "each area's booklet (the sidebar's, else the one the models answered most, else "
            "the one most candidates took). "
            + (f"Bottom, per model ({prompt_label}): its θ in each repetition (faint "
               f"markers) and its mean θ with {interval_words}. Drawn: {interval_name}. "
               f"{PAPER_AMBIGUITY} "
               + ("The right column's model rows are in the left column's order. "
                  if drawn.columns == 2 and not drawn.label_right else "") if with_models else
               f"Bottom: one row per model; this selection ({prompt_label}) has "
               "none. ")
            + f"Green shading: where SE(θ) ≤ {max_se:.2f}, i.e. where the exam measures well."
            + provenance)
