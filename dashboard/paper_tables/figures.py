"""Figures and formatted tables of the Paper tables page (Table 1, Table 2, Fig 6 / Table 3).

The numbers come from ``workflows.paper_tables``; this module only draws them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from analytics.multiple_testing import benjamini_hochberg
from dashboard.figures import area_grid, empty_panel, legend_above, panel
from dashboard.palette import OKABE_ITO, with_alpha
from inference.protocol import PROMPT_LANGUAGE_NAMES
from workflows.paper_tables import r_p_text

#: Significance level of Table 3's bold cells.
ALPHA = 0.05
#: Short enough for a panel of two columns; the caption defines it (Eq. 4).
MIN_K_TITLE = "Min-K% Prob, K = 20 (← lower: text more familiar, as if seen)"
ACCURACY_TITLE = "accuracy over repetitions (share correct)"
#: Table 1's panels: (column stem, axis title).
BASELINE_PANELS = (("ctt_percent", "CTT accuracy (%)"), ("theta", "θ (ability, logits)"),
                   ("lz", "l_z person fit (z units)"))
#: One colour per prompt language in Table 1's figure.
LANGUAGE_COLOURS = {"pt": OKABE_ITO[0], "en": OKABE_ITO[1]}


def baseline_figure(table: pd.DataFrame) -> go.Figure:
    """Table 1 drawn: per score a panel with one bar per area and prompt language at the mean
    over repetitions and an error bar of ± 1 SD (``random_baseline_table`` rows)."""
    figure = make_subplots(rows=1, cols=len(BASELINE_PANELS), horizontal_spacing=0.08,
                           subplot_titles=[title for _, title in BASELINE_PANELS])
    for column, (stem, title) in enumerate(BASELINE_PANELS, start=1):
        for language, group in table.groupby("prompt_language", sort=False):
            colour = LANGUAGE_COLOURS.get(language, OKABE_ITO[2])
            figure.add_trace(go.Bar(
                x=group["area"], y=group[f"{stem}_mean"], name=PROMPT_LANGUAGE_NAMES.get(
                    language, language), legendgroup=language, showlegend=column == 1,
                marker_color=with_alpha(colour, 0.7),
                error_y={"type": "data", "array": group[f"{stem}_sd"].fillna(0.0),
                         "visible": True},
                customdata=np.column_stack([group["repetitions"], group[f"{stem}_sd"]]),
                hovertemplate=(f"%{{x}} · {language}<br>{title}: %{{y:.2f}} ± "
                               "%{customdata[1]:.2f} (SD over %{customdata[0]} repetitions)"
                               "<extra></extra>"),
            ), row=1, col=column)
        figure.update_xaxes(title_text="area", row=1, col=column)
    # The legend's lower edge sits a fixed gap above the plotting area, clear of the panels'
    # titles; at y = 1.18 of the plotting height it came down onto "CTT accuracy (%)".
    height, margin = 400, {"t": 95, "b": 50, "l": 60, "r": 20}
    figure.update_layout(barmode="group", height=height, margin=margin,
                         legend=legend_above(height - margin["t"] - margin["b"]))
    return figure


def attribute_display(tests: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as printed: area, attribute, the four counts, χ², p and the Benjamini–Hochberg
    q over the table's tests (3 decimals)."""
    shown = tests.copy()
    shown["chi2"] = shown["chi2"].round(3)
    shown["q_value"] = benjamini_hochberg(shown["p_value"].to_numpy(np.float64)).round(3)
    shown["p_value"] = shown["p_value"].round(3)
    return shown.rename(columns={
        "with_discriminating": "with · DI ≥ 0.2", "with_not": "with · DI < 0.2",
        "without_discriminating": "without · DI ≥ 0.2", "without_not": "without · DI < 0.2",
        "chi2": "χ²", "p_value": "p", "q_value": "q (BH)"})


def min_k_figure(frame: pd.DataFrame, correlations: pd.DataFrame, areas: Sequence[str],
                 styles: dict[str, tuple[str, str]]) -> go.Figure:
    """One panel per area: one marker per item at (Min-K% Prob, accuracy) for each series, and
    the series' least-squares line across its items' Min-K% range.

    ``frame``: ``min_k_accuracy`` rows with an ``area`` column; ``correlations``: the
    ``min_k_correlations`` rows with an ``area`` column; ``styles``: colour and symbol per
    series (``series_styles``).
    """
    figure = area_grid(areas, columns=2, row_height=320)
    shown: set[str] = set()
    for index, area in enumerate(areas):
        row, col = panel(index, 2)
        part = frame[frame["area"] == area] if len(frame) else frame
        if part.empty:
            empty_panel(figure, row, col, f"no item of {area} has both values")
        for model, group in part.groupby("model", sort=True):
            colour, symbol = styles.get(model, (OKABE_ITO[0], "circle"))
            figure.add_trace(go.Scatter(
                x=group["min_k"], y=group["accuracy"], mode="markers", name=model,
                legendgroup=model, showlegend=model not in shown,
                marker={"color": with_alpha(colour, 0.75), "symbol": symbol, "size": 7},
                customdata=group[["item_id", "answers"]].to_numpy(),
                hovertemplate=(f"<b>{model}</b><br>item %{{customdata[0]}}<br>Min-K% "
                               "%{x:.3f}<br>accuracy %{y:.2f} over %{customdata[1]} answers"
                               "<extra></extra>")), row=row, col=col)
            shown.add(model)
            line = correlations[(correlations["area"] == area)
                                & (correlations["model"] == model)]
            if len(line) and np.isfinite(line["slope"].iloc[0]):
                xs = np.array([group["min_k"].min(), group["min_k"].max()])
                fit = line.iloc[0]
                figure.add_trace(go.Scatter(
                    x=xs, y=fit["slope"] * xs + fit["intercept"], mode="lines",
                    legendgroup=model, showlegend=False, line={"color": colour, "width": 2},
                    name=f"{model}: least-squares line, r = {r_p_text(fit['r'], fit['p_value'])}",
                    hoverinfo="name"), row=row, col=col)
        figure.update_xaxes(title_text=MIN_K_TITLE, row=row, col=col)
        figure.update_yaxes(title_text=ACCURACY_TITLE, range=[-0.05, 1.05], row=row, col=col)
    return figure


def r_p_markdown(correlations: pd.DataFrame, areas: Sequence[str]) -> str:
    """Table 3 as a Markdown table: one row per series and prompt language, one column per
    area, cells 'r (p)' in bold where p < :data:`ALPHA` (the paper's marking) and with a † where
    the Benjamini–Hochberg q over every cell of the table is below it too."""
    shown = correlations[correlations["area"].isin(list(areas))]
    q_values = dict(zip(shown.index, benjamini_hochberg(shown["p_value"].to_numpy(np.float64)),
                        strict=True))
    header = "| series | language | " + " | ".join(areas) + " |"
    lines = [header, "|" + "---|" * (len(areas) + 2)]
    keys = correlations[["model", "prompt_language"]].drop_duplicates()
    for model, language in keys.itertuples(index=False):
        cells = []
        for area in areas:
            found = correlations[(correlations["model"] == model)
                                 & (correlations["prompt_language"] == language)
                                 & (correlations["area"] == area)]
            if found.empty:
                cells.append("—")
                continue
            r, p_value = float(found["r"].iloc[0]), float(found["p_value"].iloc[0])
            text = r_p_text(r, p_value)
            if q_values.get(found.index[0], np.nan) < ALPHA:
                text += " †"
            cells.append(f"**{text}**" if np.isfinite(p_value) and p_value < ALPHA else text)
        name = model.replace("|", "/")
        lines.append(f"| {name} | {language} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
