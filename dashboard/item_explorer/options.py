"""The Item explorer's option figure: the share of humans (every candidate who saw the item)
and of each model series' repetitions choosing each option, in the original letters. A tall
wrong bar shared by humans and a model means they fall for the same distractor."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.figures import series_styles
from dashboard.options.figures import share_axis_range
from dashboard.palette import HUMAN_COLOUR, with_alpha
from enem.areas import BLANK_MARK, MULTIPLE_MARK, OPTION_LETTERS

#: What humans can mark (the options, blank, several marks), in the order the bars are drawn.
HUMAN_MARKS = [*OPTION_LETTERS, BLANK_MARK, MULTIPLE_MARK]
#: A model's choice is "?" when it gave no usable answer.
NO_ANSWER = "?"
OPTION_NAMES = {**{letter: letter for letter in OPTION_LETTERS}, BLANK_MARK: "blank",
                MULTIPLE_MARK: "multiple", NO_ANSWER: "no answer"}


@dataclass(frozen=True)
class OptionFigure:
    """The bars and the numbers behind them (``data``: who, option, n, share)."""

    figure: go.Figure
    data: pd.DataFrame


def option_figure(key: str | None, human_options: pd.DataFrame, choices: pd.DataFrame,
                  series_order: Sequence[str]) -> OptionFigure:
    """Grouped bars of the share choosing each option: humans (``item_option_counts``: option,
    n) over :data:`HUMAN_MARKS`, each series (``model_item_choices``: model, choice, n) over
    those and :data:`NO_ANSWER`; ``key``: the item's key letter, named on the x axis."""
    bars = go.Figure()
    rows = []
    if len(human_options):
        counts = human_options.set_index("option")["n"].reindex(HUMAN_MARKS, fill_value=0)
        share = counts / max(counts.sum(), 1)
        bars.add_trace(go.Bar(x=[OPTION_NAMES[o] for o in HUMAN_MARKS], y=share, name="humans",
                              marker_color=with_alpha(HUMAN_COLOUR, 0.7),
                              hovertemplate="humans: %{y:.1%} chose %{x}<extra></extra>"))
        rows.append(pd.DataFrame({"who": "humans", "option": HUMAN_MARKS,
                                  "n": counts.to_numpy(), "share": share.to_numpy()}))
    styles = series_styles(choices["model"].unique(), series_order) if len(choices) else {}
    for model, group in (choices.groupby("model", sort=True) if len(choices) else []):
        counts = group.set_index("choice")["n"].reindex([*HUMAN_MARKS, NO_ANSWER], fill_value=0)
        share = counts / max(counts.sum(), 1)
        bars.add_trace(go.Bar(x=[OPTION_NAMES[o] for o in counts.index], y=share, name=model,
                              marker_color=styles[model][0],
                              hovertemplate=f"{model}: %{{y:.1%}} chose %{{x}}<extra></extra>"))
        rows.append(pd.DataFrame({"who": model, "option": counts.index, "n": counts.to_numpy(),
                                  "share": share.to_numpy()}))
    tallest = max((float(np.max(frame["share"])) for frame in rows), default=0.0)
    bars.update_layout(barmode="group", height=380, margin={"t": 40, "b": 50, "l": 60, "r": 20},
                       xaxis_title=f"option (key: {key})",
                       yaxis_title="share of answers", yaxis_tickformat=".0%",
                       yaxis_range=share_axis_range(tallest),
                       legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    return OptionFigure(bars, pd.concat(rows, ignore_index=True) if rows else pd.DataFrame())


def option_caption(key: str | None, with_humans: bool, with_models: bool,
                   provenance: str) -> str:
    """The caption: whose bars are drawn (``with_humans``: candidates' answers stored;
    ``with_models``: some selected run answered the item) and how to read them."""
    return (("Share of humans (all candidates who saw the item) and of each model's "
             if with_humans else
             "No candidate's answers to this item are stored, so no human bars; share of each "
             "model's ")
            + ("repetitions " if with_models else
               "repetitions (none: no selected run answered this item) ")
            + f"choosing each option (original letters; key {key}). A tall wrong bar "
            "shared by humans and a model means they fall for the same distractor."
            + provenance)
