"""A human histogram with the models in lanes under it, per area, on one shared x axis.

Models have no "share of candidates", so they are not drawn on the histogram's y axis: under
each area's histogram a strip holds one lane per run series, where every tick is one
repetition's value (θ on Home, l_z on Person fit). Optional dashed reference lines (e.g. the
humans' 5th percentile of l_z) cross both panels. Pure figure building, no queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.figures import area_title, empty_panel, reference_line
from dashboard.palette import HUMAN_COLOUR, REFERENCE_COLOUR, with_alpha

#: Heights in pixels: a histogram, one line of lane label, the strip's axis, the gap between
#: areas.
HISTOGRAM_PX, LANE_PX, STRIP_AXIS_PX, GAP_PX = 190, 22, 40, 95
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
    shorter lane labels per model; ``references``: per area an x drawn dashed across both
    panels and named ``reference_name`` in the hover.
    """
    lanes = sorted(points["model"].unique()) if len(points) else []
    names = {model: lane_label((lane_names or {}).get(model, model)) for model in lanes}
    # Lanes are equally spaced, so the tallest (wrapped) label sets every lane's height.
    lane_px = LANE_PX * max([label_lines(name) for name in names.values()] or [1])
    heights, titles, hist_rows, gap_rows = [], [], {}, []
    for index, area in enumerate(areas):
        if index:
            heights.append(GAP_PX)
            titles.append("")
            gap_rows.append(len(heights))
        hist_rows[area] = len(heights) + 1
        heights += [HISTOGRAM_PX, lane_px * max(1, len(lanes)) + STRIP_AXIS_PX]
        titles += [area_title(area), ""]
    margin = {"t": 60, "b": 10, "l": 10, "r": 20}
    height = sum(heights) + margin["t"] + margin["b"]
    figure = make_subplots(rows=len(heights), cols=1, row_heights=heights, vertical_spacing=0.0,
                           subplot_titles=titles)
    figure.update_layout(height=height, margin=margin, barmode="overlay",
                         legend={"orientation": "h", "yanchor": "bottom", "x": 0,
                                 "y": 1.0 + 30.0 / (height - margin["t"] - margin["b"])})
    # A gap row only spaces the areas apart: its axes are dropped, not hidden (plotly.js lays
    # out and draws every subplot of the layout, hidden or not: the three of Person fit's
    # figure were about a quarter of its drawing time, issue 26). The other axes keep their
    # names and domains, and the picture is unchanged (same pixels in Chromium).
    for row in gap_rows:
        subplot = figure.get_subplot(row, 1)
        figure.layout[subplot.xaxis.plotly_name] = None
        figure.layout[subplot.yaxis.plotly_name] = None
    legend_shown: set[str] = set()
    exported = []
    for area in areas:
        row, strip = hist_rows[area], hist_rows[area] + 1
        # The strip shares the histogram's x axis; only the strip shows the ticks and title.
        shared = figure.get_subplot(row, 1).xaxis.plotly_name.replace("axis", "")
        figure.update_xaxes(matches=shared, showticklabels=False, row=row, col=1)
        figure.update_xaxes(matches=shared, title_text=x_title, title_standoff=4, row=strip,
                            col=1)
        figure.update_yaxes(title_text=f"% of candidates<br>per {bin_width:g}", row=row, col=1)
        hist = histograms.get(area, pd.DataFrame(columns=["bin", "n"]))
        if hist.empty or hist["n"].sum() == 0:
            empty_panel(figure, row, 1, f"no scored candidates in {area}")
            figure.update_yaxes(showticklabels=False, title_text="", row=row, col=1)
        else:
            share = 100.0 * hist["n"] / hist["n"].sum()
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
                x=group[value], y=[names[model]] * len(group), mode="markers",
                marker={"symbol": "line-ns-open", "size": LANE_PX - 6, "color": colour,
                        "line": {"color": with_alpha(colour, 0.75), "width": 2}},
                name=model, legendgroup=model, showlegend=model not in legend_shown,
                customdata=group[["run_id", "shuffle", "theta", "theta_se", "lz",
                                  "ctt"]].to_numpy(object),
                hovertemplate=(f"<b>{model}</b><br>θ = %{{customdata[2]:.3f}} (SE "
                               "%{customdata[3]:.3f})<br>shuffle %{customdata[1]} · l_z "
                               "%{customdata[4]:.2f} · CTT %{customdata[5]}<extra></extra>")),
                row=strip, col=1)
            legend_shown.add(model)
            exported.append(group.assign(kind="model"))
        if lanes:
            order = [names[m] for m in reversed(lanes)]
            figure.update_yaxes(type="category", categoryorder="array", categoryarray=order,
                                range=[-0.6, len(lanes) - 0.4], showgrid=True, automargin=True,
                                row=strip, col=1)
        else:
            empty_panel(figure, strip, 1, "no model runs in this selection")
            figure.update_yaxes(visible=False, row=strip, col=1)
        reference = (references or {}).get(area)
        if reference is not None and pd.notna(reference):
            line = {"color": REFERENCE_COLOUR, "dash": "dash", "width": 1}
            reference_line(figure, row, 1, x=reference, line=line, label=reference_name)
            reference_line(figure, strip, 1, x=reference, line=line)
    table = pd.concat(exported, ignore_index=True) if exported else pd.DataFrame()
    return figure, table
