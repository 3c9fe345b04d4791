"""Everything the Options and traps page shows, fetched for the sidebar's selection and put
together (cached queries in, the tables of :mod:`dashboard.option_data` and
:mod:`dashboard.option_comparisons` out)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from dashboard import option_queries, queries
from dashboard.navigation import ITEM_EXPLORER
from dashboard.option_data import answer_table, human_items, theta_cube
from dashboard.state import Filters

#: Humans answered the Portuguese exam; their length tests use the Portuguese texts.
HUMAN_TEXT_LANGUAGE = "pt"


@dataclass
class OptionSelection:
    """The selection's items and answers, areas concatenated.

    ``items``: :func:`dashboard.option_data.human_items` rows; ``answers``:
    :func:`dashboard.option_data.answer_table` rows; ``cubes[area]``: humans' counts per item,
    θ bin and letter with the bins' lower edges; ``model_theta[(series, area)]``: mean θ of the
    series' response patterns; ``human_lengths``/``model_lengths``: text lengths in Portuguese
    and in the prompt language; ``without_theta_counts``: areas whose year was ingested before
    option counts per θ bin were kept.
    """

    items: pd.DataFrame
    answers: pd.DataFrame
    cubes: dict = field(default_factory=dict)
    model_theta: dict = field(default_factory=dict)
    human_lengths: pd.DataFrame = field(default_factory=pd.DataFrame)
    model_lengths: pd.DataFrame = field(default_factory=pd.DataFrame)
    without_theta_counts: list = field(default_factory=list)

    @property
    def has_option_counts(self) -> bool:
        """Whether any human chose an option in the selection (False: items-only years)."""
        return bool(len(self.items)) and bool(self.items["humans_with_a_letter"].sum() > 0)


def load_selection(filters: Filters) -> OptionSelection:
    """The items, humans' option counts and model answers of the sidebar's areas."""
    items, answers, lengths_pt, lengths_model = [], [], [], []
    selection = OptionSelection(items=pd.DataFrame(), answers=pd.DataFrame())
    for area in filters.areas:
        area_items = queries.area_items(filters.year, area)
        theta_counts = option_queries.human_option_theta_counts(filters.year, area)
        table = human_items(area, area_items,
                            option_queries.human_option_counts(filters.year, area), theta_counts)
        items.append(table)
        selection.cubes[area] = theta_cube(theta_counts, table["item_id"].to_numpy())
        if theta_counts.empty:
            selection.without_theta_counts.append(area)
        booklet = filters.booklet_for(area)
        raw = option_queries.model_option_answers(filters.year, area, booklet, filters.language,
                                                  filters.shots, filters.models, filters.pooled)
        answers.append(answer_table(raw, table))
        points = queries.model_points(filters.year, area, booklet, filters.language,
                                      filters.shots, filters.models, filters.pooled)
        for series, theta in points.groupby("model")["theta"].mean().items():
            selection.model_theta[series, area] = float(theta)
        lengths_pt.append(option_queries.question_lengths(filters.year, area,
                                                          HUMAN_TEXT_LANGUAGE))
        lengths_model.append(option_queries.question_lengths(filters.year, area,
                                                             filters.language))
    selection.items = pd.concat(items, ignore_index=True)
    selection.answers = pd.concat(answers, ignore_index=True)
    selection.human_lengths = pd.concat(lengths_pt, ignore_index=True)
    selection.model_lengths = pd.concat(lengths_model, ignore_index=True)
    return selection


def runs_without_order(answers: pd.DataFrame) -> list[str]:
    """Series none of whose answers recorded the option order (their positions are unknown)."""
    if answers.empty:
        return []
    known = answers.groupby("model")["permutation"].apply(lambda v: v.notna().any())
    return sorted(known.index[~known.to_numpy(bool)])


def explorer_link(item_id: int, area: str, year: int) -> str:
    """A relative link opening the item in the Item explorer (``?item=&area=&year=``)."""
    return f"{ITEM_EXPLORER.url_path}?item={int(item_id)}&area={area}&year={int(year)}"


def item_words(row: pd.Series) -> str:
    """'MT · item 123456 · b = 1.23 · trap' for the item picker."""
    b = f"b = {row['b']:.2f}" if pd.notna(row.get("b")) else "no b"
    trap = " · trap" if row.get("trap") == 1 else ""
    return f"{row['area']} · item {int(row['item_id'])} · {b}{trap}"
