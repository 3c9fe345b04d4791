"""The Adaptive testing page's diagnostic report by skill (``workflows.cat.skills``): the
levels report (θ̂ per group of skills for the models beside the top 20% and 50% of humans, the
CAT paper's Table 1 / Fig. 5) and the accuracy-against-expectation report, their data from the
cached queries, their figures and tables."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import queries
from dashboard.cat.queries import area_item_icc
from dashboard.data import current_path, version_token
from dashboard.figures import series_dashes, series_styles
from dashboard.palette import HUMAN_COLOUR
from dashboard.state.filters import Filters
from enem.scoring import ScoringOptions
from workflows.cat.skills import (
    GROUPINGS,
    HUMAN_LEVEL_COLUMNS,
    HUMAN_LEVELS,
    HUMAN_SAMPLE,
    group_title,
    human_group_levels,
    level_table,
    markdown_table,
    marked_cells,
    mean_theta,
    model_group_theta,
    rank_line,
    skill_diagnostics,
)

#: The groupings (``workflows.cat.skills.GROUPINGS``) as the page's switch names them.
GROUPING_TITLES = dict(zip(GROUPINGS, ("by competência (default)", "one by one"), strict=True))

#: The human levels' names on the page.
LEVEL_TITLES = {level: f"{level} (top {share:.0%})" for level, share in HUMAN_LEVELS.items()}
#: The human levels' markers: darker for the higher level.
LEVEL_STYLES = {"High": ("#444444", "triangle-up"), "Mid": ("#999999", "triangle-down")}

#: The report's columns as the page names them.
SKILL_HEADERS = {
    "model": "model", "skill": "skill (CO_HABILIDADE)", "n_items": "items", "theta": "model θ",
    "observed": "model accuracy", "expected": "3PL expectation at θ",
    "humans": "humans at θ", "humans_n": "humans in the θ bin",
    "observed_minus_expected": "accuracy − expectation",
}


def year_options(filters: Filters) -> ScoringOptions:
    """The year's stored scoring settings (INEP's when none)."""
    stored = filters.profile.get("scoring")
    return ScoringOptions.from_stored(stored)


def year_scaling(filters: Filters) -> float:
    """The year's D (its stored scoring settings; INEP's when none)."""
    return year_options(filters).scaling


#: How a baseline series is named in the figures and tables (it is no model).
BASELINE_SUFFIX = " (baseline: random answers, not a model)"


def baseline_names(filters: Filters) -> tuple[str, ...]:
    """The store's series that are baselines (``store.model_sql.BASELINE_BACKEND``), in the
    sidebar's order: shown beside the models, never ranked, bolded or marked among them."""
    known = set(queries.baseline_series())
    return tuple(name for name in filters.series_order if name in known)


def entry_title(name: str, baselines: tuple[str, ...]) -> str:
    """A series' name on the page: a baseline's says it is one."""
    return f"{name}{BASELINE_SUFFIX}" if name in baselines else name


@dataclass(frozen=True)
class LevelReport:
    """The levels report of one area: the models' θ̂ per group (``models``, baselines
    included), the human levels (``humans``, empty without candidates), their
    ``description`` (None without candidates), the ``table`` of θ̂ by group and entry
    (``workflows.cat.skills.level_table``) and the ``baselines`` among its series."""

    models: pd.DataFrame
    humans: pd.DataFrame
    description: str | None
    table: pd.DataFrame
    baselines: tuple[str, ...] = ()


@st.cache_data(show_spinner="Scoring sampled candidates by skill…", max_entries=16)
def human_levels(token: tuple, year: int, area: str, grouping: str,
                 seed: int) -> tuple[pd.DataFrame, str]:
    """``workflows.cat.skills.human_group_levels`` (frame, description), cached by the data's
    ``token``."""
    levels = human_group_levels(current_path(), year, area, grouping, seed=seed)
    return levels.frame, levels.description


def level_report(filters: Filters, area: str, grouping: str, seed: int) -> LevelReport:
    """The selected model series' θ̂ per group on ``area`` and the year's human levels."""
    patterns = queries.model_pattern_matrix(filters.year, area, None, filters.language,
                                            filters.shots, filters.models, filters.pooled)
    models = model_group_theta(patterns, queries.area_items(filters.year, area), area,
                               grouping, year_options(filters))
    humans, description = pd.DataFrame(columns=HUMAN_LEVEL_COLUMNS), None
    if filters.has_humans:
        humans, description = human_levels(version_token(), filters.year, area, grouping,
                                           seed)
    order = [name for name in filters.series_order if name in set(models["model"])]
    baselines = tuple(name for name in baseline_names(filters) if name in order)
    return LevelReport(models, humans, description,
                       level_table(models, humans, order, baselines), baselines)


def level_figure(report: LevelReport, area: str, grouping: str,
                 catalogue: list[str]) -> go.Figure:
    """θ̂ per group: a line of markers per model, the human levels as grey triangles."""
    figure = go.Figure()
    for level, rows in report.humans.groupby("level", sort=False):
        colour, symbol = LEVEL_STYLES[level]
        figure.add_scatter(x=rows["group"], y=rows["theta"], mode="lines+markers",
                           name=LEVEL_TITLES[level],
                           line={"color": colour, "dash": "dot", "width": 1},
                           marker={"color": colour, "symbol": symbol, "size": 11},
                           customdata=rows["people"],
                           hovertemplate=f"{LEVEL_TITLES[level]}<br>%{{x}}: θ̂ %{{y:.2f}} "
                                         "(mean of %{customdata} candidates)<extra></extra>")
    series = sorted(report.models["model"].unique())
    styles, dashes = series_styles(series, catalogue), series_dashes(series, catalogue)
    for model, rows in report.models.groupby("model", sort=True):
        colour, symbol = styles[model]
        figure.add_scatter(x=rows["group"], y=rows["theta"], mode="lines+markers",
                           name=entry_title(model, report.baselines),
                           line={"color": colour, "width": 2, "dash": dashes[model]},
                           marker={"color": colour, "symbol": symbol, "size": 10},
                           customdata=rows[["patterns", "n_items"]],
                           hovertemplate=f"{model}<br>%{{x}}: θ̂ %{{y:.2f}} (mean of "
                                         "%{customdata[0]} patterns, %{customdata[1]} items)"
                                         "<extra></extra>")
    groups = list(report.table.index)
    word = "competência" if grouping == "competency" else "skill"
    figure.update_layout(
        title=(f"{area}: θ̂ by {word}, models and the top 20% / 50% of humans"
               if len(report.humans) else f"{area}: θ̂ by {word}, models (no human levels)"),
        height=440,
        xaxis={"title": ("competência de área (the skills, CO_HABILIDADE, it groups)"
                         if grouping == "competency" else "skill (CO_HABILIDADE)"),
               "categoryorder": "array", "categoryarray": groups,
               "tickvals": groups, "ticktext": [group_title(area, g) for g in groups]},
        yaxis={"title": "θ̂ on the group's items (logits)", "zeroline": True},
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0})
    return figure


def level_captions(report: LevelReport, filters: Filters, grouping: str,
                   seed: int) -> tuple[str, str]:
    """The figure's caption and the table's: what each θ̂ is, which humans, the marks."""
    word = "competência" if grouping == "competency" else "skill"
    options = year_options(filters)
    low, high = options.theta_range
    estimator = (f"EAP with a N(0, 1) prior on {options.n_quadrature} points over "
                 f"[{low:g}, {high:g}], D = {options.scaling:g}")
    humans = (f"Grey triangles: the mean θ̂, computed the same way from their own booklet's "
              f"answers, of the top 20% (High) and top 50% (Mid) of {HUMAN_SAMPLE:,} candidates "
              f"sampled from the area's scored candidates (seed {seed}): a candidate belongs to "
              "a level when their full-test θ is at or above the sample's 80th (50th) "
              "percentile; the sidebar's human filters do not apply. "
              if report.description else
              f"No human levels: {filters.year} holds no candidates (item file only). ")
    figure = (f"θ̂ of each selected model series on each {word}'s items alone: for each of "
              f"its response patterns ({filters.prompt_label}), the {estimator} from its "
              "answers to those items, then the mean over its patterns. " + humans
              + "A θ̂ from a handful of items is pulled toward 0 by the prior"
              + (", for models and humans alike" if report.description else "")
              + ": compare the entries with each other, not with the area's θ."
              + filters.provenance)
    table = ("The same θ̂ as a table. Bold: the best model on the group; ‡: above the High "
             "level (top 20%); †: above the Mid level (top 50%) only. The rank line orders "
             "the entries by their mean θ̂ over the groups every entry has; '>' where the "
             "mean of the paired differences over those groups is at least twice its standard "
             "error (SD of the differences / √groups), '≈' otherwise.")
    if report.baselines:
        table += (" " + ", ".join(report.baselines) + " answered at random: a baseline, not "
                  "a model. Its column, last, shows how far a group's θ̂ moves by chance on "
                  "so few items; it is never bold, marked or ranked.")
    return figure, table


def level_markdown(report: LevelReport, area: str) -> str:
    """The table of θ̂ by group with its marks (``workflows.cat.skills.marked_cells``), the
    human levels named as the figure names them."""
    titles = LEVEL_TITLES | {name: entry_title(name, report.baselines)
                             for name in report.baselines}
    return markdown_table(marked_cells(report.table, report.baselines), area, titles)


def level_rank(report: LevelReport) -> str:
    """The rank line of the report's entries (``workflows.cat.skills.rank_line``), the human
    levels by their short names (High, Mid)."""
    return rank_line(report.table, baselines=report.baselines)


def level_frame(report: LevelReport) -> pd.DataFrame:
    """The report's numbers, long: entry (a model or a human level), group, θ̂ and what it
    rests on."""
    humans = report.humans.rename(columns={"level": "entry"}).assign(
        entry=lambda frame: frame["entry"].map(LEVEL_TITLES))
    models = report.models.rename(columns={"model": "entry"}).assign(
        entry=lambda frame: frame["entry"].map(lambda name: entry_title(name, report.baselines)))
    return pd.concat([humans, models], ignore_index=True)


def skill_report(filters: Filters, area: str) -> pd.DataFrame:
    """The selected model series' report on ``area`` (``workflows.cat.skills``)."""
    args = (filters.year, area)
    language, shots, models, pooled = (filters.language, filters.shots, filters.models,
                                       filters.pooled)
    answers = queries.model_item_correct(*args, language, shots, models, pooled)
    points = queries.model_points(*args, None, language, shots, models, pooled)
    return skill_diagnostics(answers, mean_theta(points), queries.area_items(*args),
                             area_item_icc(*args), year_scaling(filters))


def skill_order(report: pd.DataFrame, baselines: tuple[str, ...] = ()) -> list[str]:
    """Skill labels (``H<n>``) from the models' largest mean accuracy − expectation (their
    strengths) to the smallest; a baseline's rows (``baselines``) count only when no model is
    selected (it has no strengths to rank)."""
    models = report[~report["model"].isin(baselines)]
    if not models.empty:
        report = models
    gap = report.groupby("skill")["observed_minus_expected"].mean()
    # Ties (equal gaps) keep the skill order, so the figure is the same on every run.
    order = gap.reset_index().sort_values(["observed_minus_expected", "skill"],
                                          ascending=[False, True], kind="stable")
    return [f"H{skill}" for skill in order["skill"]]


def skill_figure(report: pd.DataFrame, area: str, order: list[str],
                 catalogue: list[str], baselines: tuple[str, ...] = ()) -> go.Figure:
    """Three markers per skill and model: observed accuracy (filled), the 3PL expectation at
    the model's θ (open diamond) and humans of that θ (cross), grouped by model."""
    figure = go.Figure()
    styles = series_styles(sorted(report["model"].unique()), catalogue)
    for model, rows in report.groupby("model", sort=True):
        colour, symbol = styles[model]
        x = "H" + rows["skill"].astype(str)
        common = {"x": x, "mode": "markers", "offsetgroup": model, "legendgroup": model}
        figure.add_scatter(y=rows["observed"], name=entry_title(model, baselines),
                           marker={"color": colour, "symbol": symbol, "size": 10}, **common)
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


def skill_table(report: pd.DataFrame, baselines: tuple[str, ...] = ()) -> pd.DataFrame:
    """The report with the page's column names, a baseline's rows named as one."""
    table = report[list(SKILL_HEADERS)].assign(
        model=report["model"].map(lambda name: entry_title(name, baselines)))
    return table.rename(columns=SKILL_HEADERS)
