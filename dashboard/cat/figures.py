"""Computations and figures of the Adaptive testing page (its sections, top to bottom)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from analytics.cat import (
    CAT_ESTIMATORS,
    SELECTORS,
    CatSettings,
    jaccard_matrix,
    median_by_step,
    nearest_curve,
    noise_curves,
    noise_grid,
)
from dashboard.data import current_path, version_token
from dashboard.figures import THETA_TITLE, series_dashes, series_styles, show_figure
from dashboard.palette import HUMAN_COLOUR, REFERENCE_COLOUR
from workflows.cat.posthoc import needed_distribution, posthoc_cat
from workflows.cat.simulation import (
    SE_TARGETS,
    AreaBank,
    load_area_bank,
    run_simulation,
    simulee_thetas,
    variable_length,
)

#: The (guess, slip) grid of the noise study (the paper: 0%–30%).
NOISE_VALUES = (0.0, 0.1, 0.2, 0.3)
#: The simulated curves sit behind the models in a light grey.
GRID_COLOUR = "#BBBBBB"
#: The SE chart's axis ends here when a curve goes higher (an ML θ̂ at its bound has an SE in
#: the thousands): 2 logits is twice the prior SD, no measurement at all.
NOISE_SE_CAP = 2.0


def sidebar_settings() -> tuple[CatSettings, int, int]:
    """The simulation's settings from the sidebar: (CAT settings, simulees, seed). Every
    default is ``CatSettings``'s, as the command line's are."""
    side = st.sidebar
    side.subheader("Adaptive test")
    defaults = CatSettings()
    selector = side.selectbox("Item selection", tuple(SELECTORS), key="cat.selector",
                              index=tuple(SELECTORS).index(defaults.selector),
                              help="max-info: the most informative unused item (the paper); "
                                   "random: random fixed forms; randomesque: a random one of "
                                   "the k most informative")
    k = side.number_input("k (randomesque)", 1, 20, defaults.randomesque_k, key="cat.k")
    estimator = side.selectbox("θ estimator", CAT_ESTIMATORS, key="cat.estimator",
                               index=CAT_ESTIMATORS.index(defaults.estimator),
                               help="eap (default): posterior mean with a N(0, 1) prior on 121 "
                                    "points over [−6, 6], finite from the first answer; ml: "
                                    "bounded ML on [−6, 6] with Dodd's rule while all answers "
                                    "agree (the paper's), which under the 3PL runs to its bound "
                                    "for low scorers; map: posterior mode")
    max_items = side.slider("Items per test", 5, 45, defaults.max_items, key="cat.max_items")
    simulees = side.number_input("Simulees", 10, 5000, 100, step=10, key="cat.simulees",
                                 help="θ₀ ~ N(0, 1); the paper used 100")
    seed = side.number_input("Seed", 0, 10_000, 0, key="cat.seed")
    settings = CatSettings(selector=selector, randomesque_k=int(k), estimator=estimator,
                           max_items=int(max_items))
    return settings, int(simulees), int(seed)


@st.cache_data(show_spinner="Loading the item bank…", max_entries=32)
def area_bank(area: str, years: tuple[int, ...], token: tuple) -> AreaBank:
    """The bank ``enem-llm cat-simulate --area AREA --years …`` uses: the distinct items with
    parameters of ``years``, D from their scoring settings (cached by the data's ``token``)."""
    return load_area_bank(current_path(), area, list(years))


@st.cache_data(show_spinner="Simulating…", max_entries=32)
def simulation(_bank: AreaBank, key: tuple, settings: CatSettings, simulees: int,
               seed: int) -> tuple[pd.DataFrame, list[str]]:
    """The study table and its summary lines (cached by ``key`` = years, area, token)."""
    report = run_simulation(_bank, settings, n_simulees=simulees, seed=seed)
    return report.table, report.lines()


def mse_figure(table: pd.DataFrame, area: str) -> go.Figure:
    figure = go.Figure()
    figure.add_scatter(x=table["items"], y=table["mse_cat"], mode="lines+markers", name="CAT",
                       line={"color": HUMAN_COLOUR})
    figure.add_scatter(x=table["items"], y=table["mse_random"], mode="lines",
                       name="random fixed forms", line={"color": REFERENCE_COLOUR, "dash": "dash"})
    figure.update_layout(title=f"{area}: mean squared error of θ̂ by test length", height=380,
                         xaxis_title="items administered", yaxis_title="MSE of θ̂ (logits²)",
                         yaxis_rangemode="tozero")
    return figure


@st.cache_data(show_spinner="Simulating variable-length tests…", max_entries=32)
def variable_table(_bank: AreaBank, key: tuple, settings: CatSettings, simulees: int,
                   seed: int) -> pd.DataFrame:
    """The variable-length CAT for each of SE_TARGETS (``workflows.cat.simulation``)."""
    return variable_length(_bank, settings, SE_TARGETS, n_simulees=simulees, seed=seed)


def variable_figure(variable: pd.DataFrame, table: pd.DataFrame, area: str,
                    max_items: int) -> go.Figure:
    """Final MSE against the mean number of items, one point per SE target, over the
    fixed-length CAT's and random forms' MSE by length."""
    figure = go.Figure()
    fixed = table[table["items"] <= max_items]
    figure.add_scatter(x=fixed["items"], y=fixed["mse_cat"], mode="lines",
                       name="fixed-length CAT", line={"color": HUMAN_COLOUR, "width": 1})
    figure.add_scatter(x=fixed["items"], y=fixed["mse_random"], mode="lines",
                       name="random fixed forms",
                       line={"color": REFERENCE_COLOUR, "dash": "dash", "width": 1})
    figure.add_scatter(x=variable["mean_items"], y=variable["mse"], mode="markers+text",
                       name=f"SE < target or {max_items} items",
                       text=[f"SE < {t:g}" for t in variable["se_target"]],
                       # Alternating above and below: neighbouring targets can sit an item apart.
                       textposition=["top center" if i % 2 else "bottom center"
                                     for i in range(len(variable))],
                       marker={"color": HUMAN_COLOUR, "size": 11, "symbol": "diamond"},
                       customdata=np.column_stack([variable["se_target"],
                                                   100 * variable["reached"]]),
                       hovertemplate="SE < %{customdata[0]:g}: %{x:.1f} items on average, "
                                     "MSE %{y:.3f}, %{customdata[1]:.0f}% reached the target"
                                     "<extra></extra>")
    figure.update_layout(title=f"{area}: variable length, stop once SE(θ̂) < target "
                               f"(at most {max_items} items)", height=380,
                         xaxis_title="items administered (mean over simulees for the targets)",
                         yaxis_title="MSE of θ̂ (logits²)", yaxis_rangemode="tozero",
                         xaxis_range=[0, max_items + 1.5])
    return figure


def variable_frame(variable: pd.DataFrame) -> pd.DataFrame:
    """The variable-length study with the page's column names."""
    return variable.assign(reached=100 * variable["reached"]).rename(columns={
        "se_target": "SE target", "mean_items": "mean items", "median_items": "median items",
        "reached": "% reached the target", "mse": "final MSE"})


@st.cache_data(show_spinner="Simulating guess/slip…", max_entries=16)
def noise_table(_bank: AreaBank, key: tuple, settings: CatSettings, simulees: int,
                seed: int) -> pd.DataFrame:
    """Median SE by step for every (guess, slip) of the grid, long: guess, slip, step, se."""
    curves = noise_curves(_bank.bank, simulee_thetas(simulees, seed=seed),
                          settings.make_selector(), settings.make_estimator(),
                          noise_grid(NOISE_VALUES), max_items=settings.max_items, seed=seed)
    return pd.DataFrame([{"guess": g, "slip": s, "step": t, "se": value}
                         for (g, s), curve in curves.items()
                         for t, value in enumerate(curve) if t > 0])


def with_series(paths: pd.DataFrame) -> pd.DataFrame:
    """``paths`` with a ``series`` column naming each run: its label, with the end of its run
    id added where two runs share a label (runs are never pooled silently)."""
    runs = paths.groupby("label")["run_id"].transform("nunique")
    suffix = " · run " + paths["run_id"].str[-8:]
    return paths.assign(series=paths["label"].where(runs == 1, paths["label"] + suffix))


def model_se_curves(paths: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each live run's median SE by step over its paths (index 0: before the first item)."""
    curves = {}
    for label, rows in paths.groupby("series", sort=True):
        wide = rows.pivot_table(index="path", columns="step", values="theta_se")
        wide = wide.reindex(columns=range(1, int(wide.columns.max()) + 1)).ffill(axis=1)
        curves[label] = median_by_step(np.column_stack([np.full(len(wide), np.inf), wide]))
    return curves


def noise_figure(noise: pd.DataFrame, models: dict[str, np.ndarray]
                 ) -> tuple[go.Figure, list, bool]:
    """Median SE curves of the (guess, slip) grid in grey and the models' in colour, on a
    linear axis that ends at NOISE_SE_CAP when a curve goes higher; returns the figure, the
    nearest (guess, slip) of each model, and whether a value lies above the cap."""
    figure = go.Figure()
    grid = {}
    for (guess, slip), rows in noise.groupby(["guess", "slip"]):
        grid[(guess, slip)] = np.concatenate([[np.nan], rows.sort_values("step")["se"]])
        figure.add_scatter(x=rows["step"], y=rows["se"], mode="lines", showlegend=False,
                           line={"color": GRID_COLOUR, "width": 1},
                           hovertemplate=f"guess {guess:g}, slip {slip:g}<br>step %{{x}}: "
                                         "median SE %{y:.3f}<extra></extra>")
    styles, dashes = series_styles(models), series_dashes(models)
    nearest = []
    for label, curve in models.items():
        colour, symbol = styles[label]
        figure.add_scatter(x=np.arange(1, len(curve)), y=curve[1:], mode="lines+markers",
                           name=label, line={"color": colour, "width": 3, "dash": dashes[label]},
                           marker={"color": colour, "symbol": symbol})
        nearest.append((label, nearest_curve(curve, grid)))
    values = np.concatenate([noise["se"].to_numpy(np.float64),
                             *[np.asarray(curve[1:], dtype=np.float64)
                               for curve in models.values()]])
    values = values[~np.isnan(values)]
    top = float(values.max()) if values.size else 1.0
    clipped = top > NOISE_SE_CAP
    figure.update_layout(title="SE(θ̂) by step: simulated guess/slip grid (grey) and models",
                         height=380, xaxis_title="items administered",
                         yaxis_title="median SE(θ̂) (logits)",
                         yaxis_range=[0, NOISE_SE_CAP if clipped else 1.05 * top])
    return figure, nearest, clipped


def paths_figure(paths: pd.DataFrame) -> go.Figure:
    """θ̂ ± SE by step, one line per run and path."""
    figure = go.Figure()
    series = sorted(paths["series"].unique())
    styles, dashes = series_styles(series), series_dashes(series)
    for (label, area, path), rows in paths.groupby(["series", "area", "path"], sort=True):
        rows = rows.sort_values("step")
        colour, symbol = styles[label]
        figure.add_scatter(x=rows["step"], y=rows["theta"], mode="lines+markers",
                           name=f"{label} · {area} · path {path}",
                           line={"color": colour, "dash": dashes[label]},
                           marker={"color": colour, "symbol": symbol},
                           error_y={"type": "data", "array": rows["theta_se"], "visible": True,
                                    "color": colour, "thickness": 1})
    # Below the plot, not at its right: run labels are long, and a legend at the side took
    # about 40% of a 1440 px page's width from the paths. Its top sits 80 px under the plot
    # (clear of the ticks and the axis title); each entry may take a line of its own.
    plot_px, entries = 320, len(paths.groupby(["series", "area", "path"]))
    margin = {"t": 60, "b": 90 + 20 * entries}
    figure.update_layout(title="Live CAT paths: θ̂ ± SE after each item",
                         height=plot_px + margin["t"] + margin["b"], margin=margin,
                         xaxis_title="items administered", yaxis_title=THETA_TITLE,
                         legend={"orientation": "h", "yanchor": "top", "y": -80 / plot_px,
                                 "x": 0, "xanchor": "left"})
    return figure


def jaccard_frame(paths: pd.DataFrame) -> pd.DataFrame:
    """Jaccard overlap of the item sets of every (run, path) of one area, square."""
    sets = {f"{label} · path {path}": rows["item_id"].to_numpy()
            for (label, path), rows in paths.groupby(["series", "path"], sort=True)}
    ids = np.unique(np.concatenate(list(sets.values())))
    index = [np.searchsorted(ids, items) for items in sets.values()]
    return pd.DataFrame(jaccard_matrix(index, len(ids)), index=list(sets), columns=list(sets))


def jaccard_figure(matrix: pd.DataFrame, area: str) -> go.Figure:
    figure = go.Figure(go.Heatmap(z=matrix.to_numpy(), x=matrix.columns, y=matrix.index,
                                  zmin=0, zmax=1, colorscale="Blues", text=matrix.round(2),
                                  texttemplate="%{text}", colorbar={"title": "Jaccard"}))
    figure.update_layout(title=f"{area}: overlap of the items given, |A ∩ B| / |A ∪ B|",
                         height=max(300, 60 * len(matrix) + 150))
    return figure


@st.cache_data(show_spinner="Replaying candidates…", max_entries=16)
def posthoc(token: tuple, year: int, area: str, n: int, seed: int) -> tuple[pd.DataFrame, list]:
    result = posthoc_cat(current_path(), year, area, n_candidates=n, seed=seed)
    return result.frame, result.lines()


def posthoc_figure(frame: pd.DataFrame, area: str) -> go.Figure:
    counts = needed_distribution(frame["items_needed"])
    figure = go.Figure(go.Bar(x=counts["items_needed"], y=counts["percent"],
                              marker={"color": HUMAN_COLOUR}))
    figure.update_layout(title=f"{area}: items a CAT needed to stay within the full test's SE",
                         height=360, xaxis_title="items administered",
                         yaxis_title="% of replayed candidates")
    return figure


def cache_key(years: tuple[int, ...], area: str) -> tuple:
    """What a cached simulation depends on besides its settings: the bank's years and area,
    and the data's version."""
    return (tuple(years), area, version_token())


def show(figure: go.Figure, key: str, caption: str, data: pd.DataFrame, image_format: str):
    show_figure(figure, key=key, caption=caption, data=data, file_stem=key.replace(".", "_"),
                image_format=image_format)
