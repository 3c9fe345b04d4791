"""The Item explorer's option characteristic curves: for each option, the share of the
candidates in each θ bin who marked it (the key should rise with θ, a working distractor fall),
and each model series' choices at its mean θ."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.item_explorer.options import NO_ANSWER
from dashboard.palette import OKABE_ITO
from enem.areas import OPTION_LETTERS
from enem.item_statistics import ICC_BIN_WIDTH

#: θ bins with fewer candidates than this are not drawn (their shares are mostly noise).
MIN_BIN_CANDIDATES = 30
#: One colour per option letter A–E (Okabe–Ito without black and yellow).
OPTION_COLOURS = dict(zip(OPTION_LETTERS, (OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[2],
                                           OKABE_ITO[3], OKABE_ITO[5]), strict=True))


@dataclass(frozen=True)
class OptionCurves:
    """The figure and its numbers (``data``: who, theta, option, n, share)."""

    figure: go.Figure
    data: pd.DataFrame


def human_option_shares(counts: pd.DataFrame) -> pd.DataFrame:
    """Per θ bin with at least :data:`MIN_BIN_CANDIDATES` candidates who marked an option:
    theta (the bin's centre), option (A–E), n, share (of the bin's candidates who marked one
    option; blanks and several marks left out)."""
    marked = counts[counts["option"].isin(list(OPTION_LETTERS))]
    if marked.empty:
        return pd.DataFrame(columns=["theta", "option", "n", "share"])
    totals = marked.groupby("theta_bin")["n"].transform("sum")
    table = marked.assign(theta=marked["theta_bin"] + ICC_BIN_WIDTH / 2,
                          share=marked["n"] / totals)
    return table[totals >= MIN_BIN_CANDIDATES][["theta", "option", "n", "share"]] \
        .sort_values(["option", "theta"]).reset_index(drop=True)


def model_option_shares(choices: pd.DataFrame, model_theta: pd.DataFrame) -> pd.DataFrame:
    """Per model series and option it chose: theta (its mean θ on the patterns holding the
    item), option, n, share (of its answers that chose an option)."""
    chosen = choices[choices["choice"].isin(list(OPTION_LETTERS))]
    if chosen.empty or model_theta.empty:
        return pd.DataFrame(columns=["model", "theta", "option", "n", "share"])
    totals = chosen.groupby("model")["n"].transform("sum")
    theta = model_theta.set_index("model")["mean_theta"]
    return pd.DataFrame({"model": chosen["model"],
                         "theta": theta.reindex(chosen["model"]).to_numpy(),
                         "option": chosen["choice"], "n": chosen["n"],
                         "share": chosen["n"] / totals}).dropna(subset=["theta"])


def option_curve_figure(key: str | None, counts: pd.DataFrame, choices: pd.DataFrame,
                        model_theta: pd.DataFrame) -> OptionCurves:
    """Lines: the humans' share choosing each option by θ (the key solid and thick, the
    distractors dotted); diamonds: each series' share choosing each option at its mean θ."""
    humans = human_option_shares(counts)
    models = model_option_shares(choices.assign(choice=choices["choice"].fillna(NO_ANSWER)),
                                 model_theta)
    figure = go.Figure()
    for letter in OPTION_LETTERS:
        rows = humans[humans["option"] == letter]
        is_key = letter == key
        name = f"{letter} (key)" if is_key else letter
        figure.add_trace(go.Scatter(
            x=rows["theta"], y=rows["share"], mode="lines", name=f"humans: {name}",
            legendgroup=letter, line={"color": OPTION_COLOURS[letter],
                                      "width": 3 if is_key else 1.5,
                                      "dash": "solid" if is_key else "dot"},
            customdata=rows["n"],
            hovertemplate=(f"humans, option {name}<br>θ %{{x:.2f}}: %{{y:.0%}} "
                           "(%{customdata:,} candidates)<extra></extra>")))
        chosen = models[models["option"] == letter]
        if len(chosen):
            figure.add_trace(go.Scatter(
                x=chosen["theta"], y=chosen["share"], mode="markers", name=f"models: {name}",
                legendgroup=letter, showlegend=True,
                marker={"color": OPTION_COLOURS[letter], "symbol": "diamond", "size": 11,
                        "line": {"color": "white", "width": 1}},
                customdata=np.column_stack([chosen["model"], chosen["n"]]),
                hovertemplate=("%{customdata[0]}<br>mean θ %{x:.2f}: option "
                               f"{name} in %{{y:.0%}} of its answers (%{{customdata[1]}})"
                               "<extra></extra>")))
    figure.update_layout(
        height=420, margin={"t": 40, "b": 50, "l": 60, "r": 20}, plot_bgcolor="white",
        meta={"figure": "option-curves"}, legend={"orientation": "v", "x": 1.02, "y": 1},
        xaxis={"title": {"text": "θ (ability, logits)"}, "gridcolor": "#eeeeee"},
        yaxis={"title": {"text": "share choosing the option"}, "range": [0, 1],
               "tickformat": ".0%", "gridcolor": "#eeeeee"})
    data = pd.concat([humans.assign(who="humans"),
                      models.rename(columns={"model": "who"})], ignore_index=True)
    return OptionCurves(figure, data[["who", "theta", "option", "n", "share"]])


def option_curve_caption(key: str | None, with_humans: bool, with_models: bool,
                         provenance: str) -> str:
    """What the option curves show."""
    humans = (f"Lines: of the candidates in each {ICC_BIN_WIDTH:g}-wide θ bin who marked one "
              f"option (bins of fewer than {MIN_BIN_CANDIDATES} such candidates left out), the "
              f"share that marked each; the key{f' ({key})' if key else ''} solid and thick, "
              "the distractors dotted. A well-behaved key rises with θ and each distractor "
              "falls; a distractor that rises with θ draws able candidates. "
              if with_humans else "No candidates' marks for this item in this year. ")
    models = ("Diamonds: each selected run series at its mean θ, the share of its answers "
              "that chose each option (original letters). " if with_models else "")
    return humans + models + provenance.strip()
