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
    mean_by_step,
    nearest_curve,
    noise_curves,
    noise_grid,
)
from analytics.irt import ItemBank
from dashboard.data import current_path, version_token
from dashboard.figures import THETA_TITLE, series_styles, show_figure
from dashboard.palette import HUMAN_COLOUR, REFERENCE_COLOUR
from workflows.cat_posthoc import needed_distribution, posthoc_cat
from workflows.cat_simulation import AreaBank, run_simulation

#: The (guess, slip) grid of the noise study (the paper: 0%–30%).
NOISE_VALUES = (0.0, 0.1, 0.2, 0.3)
#: The simulated curves sit behind the models in a light grey.
GRID_COLOUR = "#BBBBBB"


def sidebar_settings() -> tuple[CatSettings, int, int]:
    """The simulation's settings from the sidebar: (CAT settings, simulees, seed)."""
    side = st.sidebar
    side.subheader("Adaptive test")
    selector = side.selectbox("Item selection", tuple(SELECTORS), key="cat.selector",
                              help="max-info: the most informative unused item (the paper); "
                                   "random: random fixed forms; randomesque: a random one of "
                                   "the k most informative")
    k = side.number_input("k (randomesque)", 1, 20, 5, key="cat.k")
    estimator = side.selectbox("θ estimator", CAT_ESTIMATORS, key="cat.estimator",
                               help="ml: bounded ML on [−6, 6], Dodd's rule while all answers "
                                    "agree (the paper); eap / map: N(0, 1) prior")
    max_items = side.slider("Items per test", 5, 45, 20, key="cat.max_items")
    simulees = side.number_input("Simulees", 10, 5000, 100, step=10, key="cat.simulees",
                                 help="θ₀ ~ N(0, 1); the paper used 100")
    seed = side.number_input("Seed", 0, 10_000, 0, key="cat.seed")
    settings = CatSettings(selector=selector, randomesque_k=int(k), estimator=estimator,
                           max_items=int(max_items))
    return settings, int(simulees), int(seed)


def area_bank(year: int, area: str, items: pd.DataFrame) -> AreaBank:
    """The page's bank: the year's distinct items of ``area`` with parameters (D = 1)."""
    bank = ItemBank.from_arrays(items["a"], items["b"], items["c"])
    return AreaBank(area, items["item_id"].to_numpy(), items["skill"].to_numpy(),
                    np.full(len(items), year), bank)


@st.cache_data(show_spinner="Simulating…", max_entries=32)
def simulation(_bank: AreaBank, key: tuple, settings: CatSettings, simulees: int,
               seed: int) -> tuple[pd.DataFrame, list[str]]:
    """The study table and its summary lines (cached by ``key`` = year, area, token)."""
    report = run_simulation(_bank, settings, n_simulees=simulees, seed=seed)
    return report.table, report.lines()


def mse_figure(table: pd.DataFrame, area: str) -> go.Figure:
    figure = go.Figure()
    figure.add_scatter(x=table["items"], y=table["mse_cat"], mode="lines+markers", name="CAT",
                       line={"color": HUMAN_COLOUR})
    figure.add_scatter(x=table["items"], y=table["mse_random"], mode="lines",
                       name="random fixed forms", line={"color": REFERENCE_COLOUR, "dash": "dash"})
    figure.update_layout(title=f"{area}: mean squared error of θ̂ by test length", height=380,
                         xaxis_title="items administered", yaxis_title="MSE of θ̂ (logits²)")
    return figure


@st.cache_data(show_spinner="Simulating guess/slip…", max_entries=16)
def noise_table(_bank: AreaBank, key: tuple, settings: CatSettings, simulees: int,
                seed: int) -> pd.DataFrame:
    """Mean SE by step for every (guess, slip) of the grid, long: guess, slip, step, se."""
    curves = noise_curves(_bank.bank, np.random.default_rng([seed, 1]).normal(size=simulees),
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
    """Each live run's mean SE by step over its paths (index 0: before the first item)."""
    curves = {}
    for label, rows in paths.groupby("series", sort=True):
        wide = rows.pivot_table(index="path", columns="step", values="theta_se")
        wide = wide.reindex(columns=range(1, int(wide.columns.max()) + 1)).ffill(axis=1)
        curves[label] = mean_by_step(np.column_stack([np.full(len(wide), np.inf), wide]))
    return curves


def noise_figure(noise: pd.DataFrame, models: dict[str, np.ndarray]) -> tuple[go.Figure, list]:
    """SE curves of the (guess, slip) grid in grey, models' curves in colour; the nearest
    (guess, slip) of each model."""
    figure = go.Figure()
    grid = {}
    for (guess, slip), rows in noise.groupby(["guess", "slip"]):
        grid[(guess, slip)] = np.concatenate([[np.nan], rows.sort_values("step")["se"]])
        figure.add_scatter(x=rows["step"], y=rows["se"], mode="lines", showlegend=False,
                           line={"color": GRID_COLOUR, "width": 1},
                           hovertemplate=f"guess {guess:g}, slip {slip:g}<br>step %{{x}}: "
                                         "SE %{y:.3f}<extra></extra>")
    styles = series_styles(models)
    nearest = []
    for label, curve in models.items():
        figure.add_scatter(x=np.arange(1, len(curve)), y=curve[1:], mode="lines+markers",
                           name=label, line={"color": styles[label][0], "width": 3})
        nearest.append((label, nearest_curve(curve, grid)))
    figure.update_layout(title="SE(θ̂) by step: simulated guess/slip grid (grey) and models",
                         height=380, xaxis_title="items administered",
                         yaxis_title="mean SE(θ̂) (logits, log scale)", yaxis_type="log")
    return figure, nearest


def paths_figure(paths: pd.DataFrame) -> go.Figure:
    """θ̂ ± SE by step, one line per run and path."""
    figure = go.Figure()
    styles = series_styles(sorted(paths["series"].unique()))
    for (label, area, path), rows in paths.groupby(["series", "area", "path"], sort=True):
        rows = rows.sort_values("step")
        colour = styles[label][0]
        figure.add_scatter(x=rows["step"], y=rows["theta"], mode="lines+markers",
                           name=f"{label} · {area} · path {path}", line={"color": colour},
                           error_y={"type": "data", "array": rows["theta_se"], "visible": True,
                                    "color": colour, "thickness": 1})
    figure.update_layout(title="Live CAT paths: θ̂ ± SE after each item", height=420,
                         xaxis_title="items administered", yaxis_title=THETA_TITLE)
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


def cache_key(year: int, area: str) -> tuple:
    """What a cached simulation depends on besides its settings: the data's version."""
    return (year, area, version_token())


def show(figure: go.Figure, key: str, caption: str, data: pd.DataFrame, image_format: str):
    show_figure(figure, key=key, caption=caption, data=data, file_stem=key.replace(".", "_"),
                image_format=image_format)
