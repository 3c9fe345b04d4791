"""A human histogram with the models in lanes under it, per area, on one shared x axis.

Models have no "share of candidates", so they are not drawn on the histogram's scale: under
each area's bars, below the zero line, one lane per run series holds a tick per repetition
(θ on Home, l_z or l_z* on Person fit). Bars and lanes share one subplot per area: the y axis
maps the bars' percentages above zero and the lanes below it (each lane a fixed height in
pixels, its name as the tick label), so an area costs plotly.js one subplot, not two (the
lanes as a second subplot per area doubled the figure's drawing time in Chromium, issue 26).
Optional dashed reference lines (e.g. the humans' 5th percentile of l_z) cross bars and lanes.
Pure figure building, no queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import area_title, empty_panel, reference_line
from dashboard.palette import HUMAN_COLOUR, REFERENCE_COLOUR, with_alpha

#: Heights in pixels: the bars, one line of lane label, the x axis under the lanes (ticks and
#: title), the gap between areas, the space between the zero line and the first lane.
HISTOGRAM_PX, LANE_PX, STRIP_AXIS_PX, GAP_PX, LANE_GAP_PX = 190, 22, 40, 95, 8
#: Bars reach this share of the histogram's height at most (room above the tallest).
HEADROOM = 1.08
#: Percent steps the bars' ticks may take, and at most how many ticks they get.
PERCENT_STEPS, MAX_PERCENT_TICKS = (0.5, 1, 2, 2.5, 5, 10, 20, 25, 50), 4
#: The start of the bars' axis title (the bin width follows it).
BARS_TITLE = "% of candidates"
#: Longest lane label kept on one line; a longer one wraps at its " · " parts (never cut: the
#: label is the series' name in the legend and the run picker), and the left margin widens to
#: the longest line (plotly's automargin).
LANE_LABEL_CHARS = 48


def lane_label(name: str) -> str:
    """``name`` whole, wrapped onto several lines (``<br>``) at its " · " separators when it is
    longer than :data:`LANE_LABEL_CHARS`; a single part longer than that stays on one line."""
    if len(name) <= LANE_LABEL_CHARS:
        return name
    lines: list[str] = []
    for part in name.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= LANE_LABEL_CHARS:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    # Each wrapped line ends with the separator, so the label reads as the name it is.
    return " ·<br>".join(lines)


def label_lines(label: str) -> int:
    """How many lines a lane label takes."""
    return label.count("<br>") + 1


def percent_ticks(top: float) -> list[float]:
    """Round percentages from 0 to ``top`` (> 0), at most :data:`MAX_PERCENT_TICKS` + 1."""
    step = next((step for step in PERCENT_STEPS if top / step <= MAX_PERCENT_TICKS),
                PERCENT_STEPS[-1])
    return [float(tick) for tick in np.arange(0.0, top + 1e-9, step)]


#: What a lane tick's hover reads (``customdata``), in order.
_LANE_CUSTOM = ("shuffle", "theta", "theta_se", "lz", "ctt")


def histogram_with_lanes(
    areas: Sequence[str], histograms: Mapping[str, pd.DataFrame], points: pd.DataFrame,
    value: str, *, bin_width: float, styles: Mapping[str, tuple[str, str]], x_title: str,
    human_label: str, lane_names: Mapping[str, str] | None = None,
    references: Mapping[str, float] | None = None, reference_name: str = "",
) -> tuple[go.Figure, pd.DataFrame]:
    """The figure and the table behind it.

    ``histograms``: per area, columns ``bin`` (lower edge) and ``n`` (may be empty: no
    humans); ``points``: one row per repetition with columns area, model, ``value``, run_id,
    shuffle, theta, theta_se, lz, ctt; ``styles``: (colour, symbol) per model; ``lane_names``:
    shorter lane labels per model; ``references``: per area an x drawn dashed across bars and
    lanes and named ``reference_name`` in the hover.

    Each area is one subplot (row): bars in % of candidates above y = 0, and the lanes below
    it, lane k centred at :func:`lane_positions`' k-th value; the y axis labels both (its
    percent ticks, then each lane's name) and keeps the pixels of each part fixed. When no
    area has humans (a store of item files and model runs only), no room is kept for bars:
    the figure is the lanes alone, and no panel says "no candidates" four times.
    """
    humans_anywhere = any(not hist.empty and hist["n"].sum() > 0
                          for hist in histograms.values())
    histogram_px = HISTOGRAM_PX if humans_anywhere else 0
    lanes = sorted(points["model"].unique()) if len(points) else []
    names = {model: lane_label((lane_names or {}).get(model, model)) for model in lanes}
    # Lanes are equally spaced, so the tallest (wrapped) label sets every lane's height.
    lane_px = LANE_PX * max([label_lines(name) for name in names.values()] or [1])
    strip_px = LANE_GAP_PX + lane_px * max(1, len(lanes))
    domain_px = histogram_px + strip_px
    spacing_px = GAP_PX + STRIP_AXIS_PX
    plot_px = len(areas) * domain_px + (len(areas) - 1) * spacing_px
    # Long lane labels and the axis title widen the left margin (dashboard.margins before
    # drawing, else plotly's automargin).
    margin = {"t": 60, "b": STRIP_AXIS_PX + 10, "l": 70, "r": 20}
    height = plot_px + margin["t"] + margin["b"]
    figure = make_subplots(rows=len(areas), cols=1, vertical_spacing=spacing_px / plot_px
                           if len(areas) > 1 else 0.0,
                           subplot_titles=[area_title(area) for area in areas])
    figure.update_layout(height=height, margin=margin, barmode="overlay",
                         legend={"orientation": "h", "yanchor": "bottom", "x": 0,
                                 "y": 1.0 + 30.0 / plot_px})
    legend_shown: set[str] = set()
    exported = []
    # Heights within a subplot's domain, as fractions: the middle of the bars, of the lanes
    # (where a panel without bars or without lanes says so).
    bars_middle = 1.0 - histogram_px / 2 / domain_px
    lanes_middle = strip_px / 2 / domain_px
    for row, area in enumerate(areas, start=1):
        hist = histograms.get(area, pd.DataFrame(columns=["bin", "n"]))
        has_humans = not hist.empty and hist["n"].sum() > 0
        share = 100.0 * hist["n"] / hist["n"].sum() if has_humans else pd.Series(dtype=float)
        top = float(share.max()) * HEADROOM if has_humans else (1.0 if humans_anywhere else 0.0)
        per_px = top / histogram_px if humans_anywhere else 1.0  # y units per pixel
        positions = lane_positions(len(lanes), lane_px, per_px)
        if has_humans:
            figure.add_trace(go.Bar(
                x=hist["bin"] + bin_width / 2, y=share, width=bin_width, name=human_label,
                marker_color=with_alpha(HUMAN_COLOUR, 0.55), legendgroup="humans",
                showlegend="humans" not in legend_shown,
                hovertemplate=f"{value} %{{x:.2f}}: %{{y:.2f}}% of candidates<extra></extra>"),
                row=row, col=1)
            legend_shown.add("humans")
            exported.append(hist.assign(area=area, share_percent=share, kind="humans"))
        in_area = points[points["area"] == area] if len(points) else points
        for model, group in (in_area.groupby("model", sort=True) if len(in_area) else []):
            colour, _ = styles[model]
            figure.add_trace(go.Scatter(
                x=group[value], y=np.full(len(group), positions[lanes.index(model)]),
                mode="markers",
                marker={"symbol": "line-ns-open", "size": LANE_PX - 6, "color": colour,
                        "line": {"color": with_alpha(colour, 0.75), "width": 2}},
                name=model, legendgroup=model, showlegend=model not in legend_shown,
                # Numbers only: they travel as one typed array; a column of text made
                # every value a JSON item the browser walked through (0.25 s on Person fit).
                customdata=group[list(_LANE_CUSTOM)].to_numpy(float),
                hovertemplate=(f"<b>{model}</b><br>θ = %{{customdata[1]:.3f}} (SE "
                               "%{customdata[2]:.3f})<br>shuffle %{customdata[0]} · l_z "
                               "%{customdata[3]:.2f} · CTT %{customdata[4]}<extra></extra>")),
                row=row, col=1)
            legend_shown.add(model)
            exported.append(group.assign(kind="model"))
        percents = percent_ticks(top / HEADROOM) if has_humans else []
        # The axis title names the bars: it stands left of the lane names, so it can never
        # run into them, however small a slide squeezes the figure.
        figure.update_yaxes(
            range=[-strip_px * per_px, top], zeroline=True, showgrid=True,
            tickvals=percents + positions, automargin=True,
            title_text=f"{BARS_TITLE} per {bin_width:g} (bars)" if has_humans else None,
            ticktext=[f"{tick:g}" for tick in percents] + [names[m] for m in lanes],
            row=row, col=1)
        figure.update_xaxes(title_text=x_title, title_standoff=4, row=row, col=1)
        if humans_anywhere and not has_humans:
            empty_panel(figure, row, 1, f"no scored candidates in {area}", y=bars_middle)
        if not lanes:
            empty_panel(figure, row, 1, "no model runs in this selection", y=lanes_middle)
        reference = (references or {}).get(area)
        if reference is not None and pd.notna(reference):
            line = {"color": REFERENCE_COLOUR, "dash": "dash", "width": 1}
            reference_line(figure, row, 1, x=reference, line=line, label=reference_name)
    table = pd.concat(exported, ignore_index=True) if exported else pd.DataFrame()
    return figure, table


def lane_positions(n_lanes: int, lane_px: float, per_px: float) -> list[float]:
    """The y of each lane's centre (first lane nearest the zero line), ``lane_px`` pixels
    apart under a gap of :data:`LANE_GAP_PX`, at ``per_px`` y units per pixel."""
    return [-(LANE_GAP_PX + (k + 0.5) * lane_px) * per_px for k in range(n_lanes)]
