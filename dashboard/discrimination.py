"""The Discrimination page's numbers and figure (the paper's Fig. 5): item by item, the
discrimination index (DI) of humans, of the models and of the random baseline.

The DI of an item is the proportion correct in the top group minus the bottom group
(:data:`analytics.ctt.DISCRIMINATION_GROUP_FRACTION` of a population each) of a population
ranked by θ. Populations:

- ``humans``: every candidate of the year (``item_stats.di``, stored by the ingest);
- ``models``: every selected model run's response patterns ranked together, or, per run, each
  run's (or pooled model's) patterns on their own (columns ``DI · <series>``);
- :data:`BASELINE`: the random-baseline runs' patterns, never pooled with the models: ranked on
  their own, a reference for how items look when patterns of pure chance are ranked.

:func:`load_discrimination` reads the store (through the dashboard's cached queries);
everything else here is pure (frames in, frames or a figure out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from analytics.ctt import DISCRIMINATION_GROUP_FRACTION
from dashboard import queries
from dashboard.figures import area_grid, panel, series_styles
from dashboard.palette import (
    HUMAN_COLOUR,
    OKABE_ITO,
    REFERENCE_COLOUR,
    bar_pattern,
    symbol_pattern,
    with_alpha,
)
from dashboard.paper_tables import queries as paper_queries
from dashboard.summaries import model_item_di

#: An item "separates strong from weak" above this DI (proportion).
GOOD_DI = 0.2
#: Width of a DI bin of the histogram (proportion), and the bins' edges on [−1, 1].
BIN_WIDTH = 0.1
# + 0.0 turns the -0.0 that rounding leaves into 0.0 (the picker would show "-0.0").
BIN_EDGES = np.round(np.arange(-1.0, 1.0001, BIN_WIDTH), 6) + 0.0
#: The population of the random-baseline runs' patterns, kept apart from the models.
BASELINE = "random baseline"
#: Hatched, in the reference colour: no model's colour (each run has one in the per-run view).
BASELINE_MARKER = {"color": "white", "pattern": {"shape": "/", "fgcolor": REFERENCE_COLOUR},
                   "line": {"color": REFERENCE_COLOUR, "width": 1}}
#: Prefix of a per-run DI column.
PER_RUN_PREFIX = "DI · "
#: "top 25% − bottom 25%", from the rule's constant.
GROUPS_WORDS = (f"top {DISCRIMINATION_GROUP_FRACTION:.0%} − bottom "
                f"{DISCRIMINATION_GROUP_FRACTION:.0%}")


@dataclass(frozen=True)
class DiscriminationData:
    """Every item's DI per population, for the selected areas.

    - ``table``: one row per (area, item) with area, item_id, skill, a, b, human_p_value,
      human_di, model_di, random_di and, per run, ``DI · <series>`` (DIs are proportions,
      NaN where a population has none);
    - ``columns``: population → its DI column (humans, models, :data:`BASELINE`, then each run
      in order of first appearance);
    - ``patterns`` / ``baseline_patterns``: per area, model / random-baseline patterns ranked;
    - ``baseline_labels``: the selected random-baseline series; ``per_run``: the page's switch.
    """

    table: pd.DataFrame
    columns: dict[str, str]
    patterns: dict[str, int]
    baseline_patterns: dict[str, int]
    baseline_labels: list[str]
    per_run: bool

    @property
    def with_humans(self) -> bool:
        """Humans are a population only where the store has their DI (a year stored from its
        item file alone has none: no grey bars, legend entry or picker choice for nothing)."""
        return bool(self.table["human_di"].notna().any())

    @property
    def populations(self) -> list[str]:
        """The populations drawn and offered by the pickers, in legend order."""
        runs = [s for s in self.columns if s not in ("humans", "models", BASELINE)]
        return ((["humans"] if self.with_humans else [])
                + (runs if self.per_run else ["models"]) + [BASELINE])

    @property
    def model_populations(self) -> list[str]:
        """The populations of model patterns (``models``, or one per run)."""
        return [p for p in self.populations if p not in ("humans", BASELINE)]

    def patterns_in(self, population: str, area: str) -> int:
        """Patterns ranked in a model population of ``area`` (0: nothing to draw)."""
        return self.baseline_patterns[area] if population == BASELINE else self.patterns[area]


def bin_of(values: pd.Series) -> pd.Series:
    """Lower edge of each value's DI bin (bins of :data:`BIN_WIDTH` on [−1, 1]); NaN stays NaN."""
    shifted = np.nan_to_num(values.to_numpy(float) + 1.0)
    index = np.clip(np.floor(shifted / BIN_WIDTH + 1e-9), 0, len(BIN_EDGES) - 2)
    return pd.Series(np.where(values.notna(), BIN_EDGES[index.astype(int)], np.nan),
                     index=values.index)


def load_discrimination(year: int, areas: Sequence[str], booklets: Mapping[str, int | None],
                        language: str, shots: int | None, models: Sequence[str], pooled: bool,
                        per_run: bool) -> DiscriminationData:
    """Each item's DI per population in ``areas`` of ``year`` (see :class:`DiscriminationData`).

    ``booklets``: per area the sidebar's booklet (None: every booklet); ``language``/``shots``:
    the prompt setting; ``models``: the selected series labels, split here into models and
    random-baseline runs; ``pooled``: the runs of a model pooled into one series.
    """
    random_labels = set(paper_queries.random_series())
    model_labels = [m for m in models if m not in random_labels]
    baseline_labels = [m for m in models if m in random_labels]
    columns: dict[str, str] = {"humans": "human_di", "models": "model_di",
                               BASELINE: "random_di"}
    tables, patterns, baseline_patterns = [], {}, {}
    for area in areas:
        items = queries.area_items(year, area)
        args = (year, area, booklets[area], language, shots)
        long = queries.model_pattern_matrix(*args, model_labels, pooled)
        model_di, patterns[area] = model_item_di(long, DISCRIMINATION_GROUP_FRACTION)
        baseline = queries.model_pattern_matrix(*args, baseline_labels, pooled)
        random_di, baseline_patterns[area] = model_item_di(baseline,
                                                           DISCRIMINATION_GROUP_FRACTION)
        frame = pd.DataFrame({
            "area": area, "item_id": items["item_id"].to_numpy(),
            "skill": items["skill"].to_numpy(), "a": items["a"].to_numpy(),
            "b": items["b"].to_numpy(), "human_p_value": items["p_value"].to_numpy(),
            "human_di": items["di"].to_numpy(),
            "model_di": model_di.reindex(items["item_id"]).to_numpy(),
            "random_di": random_di.reindex(items["item_id"]).to_numpy(),
        })
        if per_run:
            for series, rows in long.groupby("model", sort=True):
                columns.setdefault(series, f"{PER_RUN_PREFIX}{series}")
                frame[columns[series]] = model_item_di(
                    rows, DISCRIMINATION_GROUP_FRACTION)[0].reindex(items["item_id"]).to_numpy()
        tables.append(frame)
    table = pd.concat(tables, ignore_index=True)
    if not per_run:
        table = table[[c for c in table if not c.startswith(PER_RUN_PREFIX)]]
    return DiscriminationData(table=table, columns=columns, patterns=patterns,
                              baseline_patterns=baseline_patterns,
                              baseline_labels=baseline_labels, per_run=per_run)


def areas_with_patterns(data: DiscriminationData, areas: Sequence[str]) -> pd.DataFrame:
    """A frame with an ``area`` column listing the areas where some model or baseline pattern
    was ranked (what ``note_missing_runs`` reads)."""
    return pd.DataFrame({"area": [a for a in areas
                                  if data.patterns[a] or data.baseline_patterns[a]]})


def population_marker(population: str, styles: Mapping[str, tuple[str, str]],
                      per_run: bool) -> dict:
    """The bars' marker of a population: its colour, or the baseline's hatching."""
    if population == BASELINE:
        return BASELINE_MARKER
    colour, symbol = (styles[population] if per_run and population in styles
                      else (HUMAN_COLOUR if population == "humans" else OKABE_ITO[0], ""))
    # Runs of one model share its colour; their bars differ by hatching.
    return {"color": with_alpha(colour, 0.75), "pattern": bar_pattern(symbol_pattern(symbol))}


def discrimination_figure(data: DiscriminationData, areas: Sequence[str],
                          series_order: Sequence[str]) -> tuple[go.Figure, list[tuple[str, str]]]:
    """Per area, items per DI bin of each population, side by side (a click lands on the bar
    clicked); a dashed line at :data:`GOOD_DI`.

    Returns the figure and the (area, population) of each trace in order, so a click's
    ``curve_number`` names the bar clicked. ``series_order``: the database's series labels in
    catalogue order (a run keeps its colour).
    """
    populations = data.populations
    styles = (series_styles(data.model_populations, series_order) if data.per_run else {})
    figure = area_grid(areas, columns=2, row_height=300, vertical_spacing=0.2)
    trace_keys: list[tuple[str, str]] = []
    shown_legend: set[str] = set()
    for index, area in enumerate(areas):
        row, col = panel(index, 2)
        part = data.table[data.table["area"] == area]
        tallest = 0
        for population in populations:
            values = part.get(data.columns[population])
            if population != "humans" and (data.patterns_in(population, area) == 0
                                           or values is None or values.isna().all()):
                continue
            counts = bin_of(values).value_counts().reindex(BIN_EDGES[:-1], fill_value=0)
            figure.add_trace(go.Bar(
                x=counts.index + BIN_WIDTH / 2, y=counts.to_numpy(),
                name=population, legendgroup=population,
                showlegend=population not in shown_legend,
                marker=population_marker(population, styles, data.per_run),
                offsetgroup=population,
                customdata=np.column_stack([counts.index, counts.index + BIN_WIDTH]),
                hovertemplate=(f"{population}: %{{y}} items with DI in "
                               "[%{customdata[0]:.1f}, %{customdata[1]:.1f})<extra></extra>"),
            ), row=row, col=col)
            trace_keys.append((area, population))
            shown_legend.add(population)
            tallest = max(tallest, int(counts.max()))
        figure.add_vline(x=GOOD_DI, line={"color": REFERENCE_COLOUR, "dash": "dash", "width": 1},
                         annotation_text=f"DI = {GOOD_DI:g}", annotation_position="top right",
                         row=row, col=col)
        figure.update_xaxes(title_text=f"discrimination index ({GROUPS_WORDS}, proportion)",
                            range=[-1, 1], row=row, col=col)
        # Headroom above the tallest bar, so it does not end on the frame nor run under the
        # "DI = 0.2" label at the top.
        figure.update_yaxes(title_text="items", range=[0, max(tallest, 1) * 1.18], row=row,
                            col=col)
    # Side by side, not overlaid: a click then lands on the bar that was clicked.
    figure.update_layout(barmode="group", bargap=0.1)
    return figure, trace_keys


def discrimination_caption(data: DiscriminationData, year: int, prompt_label: str,
                           provenance: str) -> str:
    """The figure's caption: which populations the bars are, and the page's provenance."""
    return ("Items per 0.1-wide DI bin: "
            + ("grey for humans (every candidate of the year), " if data.with_humans else
               f"no human bars ({year} holds no candidates' answers), ")
            + ("one colour per run, each run's patterns ranked by θ on their own"
               if data.per_run else "blue for every selected model run's patterns ranked by θ "
               "together")
            + f" ({prompt_label}). "
            + (f"The random baseline is no model: its runs' patterns "
               f"({', '.join(data.baseline_labels)}) are not pooled with the models, they are "
               f"ranked on their own and drawn as the hatched \"{BASELINE}\" bars: a "
               "reference for how discriminating items look when patterns of pure chance are "
               "ranked by the θ their own answers give. "
               if data.baseline_labels else
               "No random-baseline run is selected (it would be its own population, not "
               "pooled with the models). ")
            + f"Right of the dashed line (DI > {GOOD_DI:g}) an item separates strong from weak; "
            "click a bar to list its items below." + provenance)


def good_items_summary(data: DiscriminationData) -> pd.DataFrame:
    """Per area: items, items with DI > :data:`GOOD_DI` per population, model items without a
    DI, and patterns ranked. A count of 0 would claim a population was looked at: the humans'
    column is left out in a year without candidates, the baseline's when no random-baseline
    run is selected."""
    def good(values: pd.Series) -> int:
        return int((values > GOOD_DI).sum())

    columns = data.columns
    summary = data.table.groupby("area").agg(
        items=("item_id", "size"),
        human_good=("human_di", good),
        model_good=("model_di", good),
        model_missing=("model_di", lambda v: int(v.isna().sum())),
        random_good=("random_di", good),
        **{f"good · {s}": (columns[s], good) for s in data.model_populations if data.per_run},
    ).reset_index()
    summary["patterns_ranked"] = summary["area"].map(data.patterns)
    summary["random_patterns_ranked"] = summary["area"].map(data.baseline_patterns)
    absent = ((["human_good"] if not data.with_humans else [])
              + (["random_good", "random_patterns_ranked"] if not data.baseline_labels else []))
    return summary.drop(columns=absent)


def items_in_bin(data: DiscriminationData, area: str, population: str,
                 bin_choice: str) -> pd.DataFrame:
    """The items of ``area`` whose ``population`` DI lies in the bin with lower edge
    ``bin_choice`` ('all': every item), sorted by b (no b last). Columns with no value at all
    (no candidates, no baseline run) are left out."""
    shown = data.table[data.table["area"] == area]
    if bin_choice != "all":
        shown = shown[np.isclose(bin_of(shown[data.columns[population]]), float(bin_choice))]
    shown = shown.sort_values("b", na_position="last")
    return shown[[c for c in shown.columns
                  if c == "area" or shown.empty or shown[c].notna().any()]]


def bin_caption(shown: pd.DataFrame, area: str, population: str, bin_choice: str) -> str:
    """The caption under the listed items: how many, of which area and bin."""
    return (f"{len(shown)} items of {area}"
            + ("" if bin_choice == "all" else f" whose {population} DI lies in "
               f"[{float(bin_choice):.1f}, {float(bin_choice) + BIN_WIDTH:.1f})")
            + "; open one in the Item explorer to see its curve and options.")
