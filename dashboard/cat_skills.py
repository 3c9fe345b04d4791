"""The Adaptive testing page's diagnostic report by skill (``workflows.cat_skills``): its data
from the cached queries, its figure and its table."""

from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go

from dashboard import queries
from dashboard.cat_queries import area_item_icc
from dashboard.figures import series_styles
from dashboard.palette import HUMAN_COLOUR
from dashboard.state import Filters
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from workflows.cat_skills import mean_theta, skill_diagnostics

#: The report's columns as the page names them.
SKILL_HEADERS = {
    "model": "model", "skill": "skill (CO_HABILIDADE)", "n_items": "items", "theta": "model θ",
    "observed": "model accuracy", "expected": "3PL expectation at θ",
    "humans": "humans at θ", "humans_n": "humans in the θ bin",
    "observed_minus_expected": "accuracy − expectation",
}


def year_scaling(filters: Filters) -> float:
    """The year's D (its stored scoring settings; INEP's when none)."""
    stored = filters.profile.get("scoring")
    options = ScoringOptions.from_dict(json.loads(stored)) if stored else DEFAULT_OPTIONS
    return options.scaling


def skill_report(filters: Filters, area: str) -> pd.DataFrame:
    """The selected model series' report on ``area`` (``workflows.cat_skills``)."""
    args = (filters.year, area)
    prompt = (filters.language, filters.shots, filters.models, filters.pooled)
    answers = queries.model_item_correct(*args, *prompt)
    points = queries.model_points(*args, None, *prompt)
    return skill_diagnostics(answers, mean_theta(points), queries.area_items(*args),
                             area_item_icc(*args), year_scaling(filters))


def skill_order(report: pd.DataFrame) -> list[str]:
    """Skill labels (``H<n>``) from the models' largest mean accuracy − expectation (their
    strengths) to the smallest."""
    gap = report.groupby("skill")["observed_minus_expected"].mean()
    # Ties (equal gaps) keep the skill order, so the figure is the same on every run.
    order = gap.reset_index().sort_values(["observed_minus_expected", "skill"],
                                          ascending=[False, True], kind="stable")
    return [f"H{skill}" for skill in order["skill"]]


def skill_figure(report: pd.DataFrame, area: str, order: list[str],
                 catalogue: list[str]) -> go.Figure:
    """Three markers per skill and model: observed accuracy (filled), the 3PL expectation at
    the model's θ (open diamond) and humans of that θ (cross), grouped by model."""
    figure = go.Figure()
    styles = series_styles(sorted(report["model"].unique()), catalogue)
    for model, rows in report.groupby("model", sort=True):
        colour = styles[model][0]
        x = "H" + rows["skill"].astype(str)
        common = {"x": x, "mode": "markers", "offsetgroup": model, "legendgroup": model}
        figure.add_scatter(y=rows["observed"], name=model, marker={"color": colour, "size": 10},
                           **common)
        figure.add_scatter(y=rows["expected"], name=f"{model}: 3PL expectation at its θ",
                           marker={"color": colour, "size": 10, "symbol": "diamond-open",
                                   "line": {"width": 2}}, **common)
        figure.add_scatter(y=rows["humans"], name=f"{model}: humans at its θ",
                           marker={"color": HUMAN_COLOUR, "size": 9, "symbol": "x"}, **common)
    figure.update_layout(title=f"{area}: accuracy by skill, model vs its 3PL expectation and "
                               "humans of its θ", height=440, scattermode="group",
                         xaxis={"title": "skill (CO_HABILIDADE)", "categoryorder": "array",
                                "categoryarray": order},
                         yaxis={"title": "fraction correct", "range": [0, 1]})
    return figure


def skill_table(report: pd.DataFrame) -> pd.DataFrame:
    """The report with the page's column names."""
    return report[list(SKILL_HEADERS)].rename(columns=SKILL_HEADERS)
