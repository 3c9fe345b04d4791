"""Discrimination (the paper's Fig. 5): do items separate strong from weak *models* as they do
humans?

The discrimination index of an item is the proportion correct in the top 25% minus the bottom
25% of a population ranked by θ. For humans the population is every candidate; for models it is
every model response pattern (model × run × shuffle) in the sidebar's selection, or each run's
patterns on their own (the page's switch). The random baseline (backend ``random``) is no model:
its patterns are never pooled with the models', they are ranked on their own and drawn as a
population of their own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import queries
from dashboard.figures import area_grid, panel, series_styles, show_figure
from dashboard.palette import (
    HUMAN_COLOUR,
    OKABE_ITO,
    REFERENCE_COLOUR,
    bar_pattern,
    symbol_pattern,
    with_alpha,
)
from dashboard.paper_tables import queries as paper_queries
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.summaries import model_item_di

GOOD_DI = 0.2
GROUP_FRACTION = 0.25
BIN_WIDTH = 0.1
# + 0.0 turns the -0.0 that rounding leaves into 0.0 (the picker would show "-0.0").
BIN_EDGES = np.round(np.arange(-1.0, 1.0001, BIN_WIDTH), 6) + 0.0
#: The population of the random-baseline runs' patterns, kept apart from the models.
BASELINE = "random baseline"
#: Hatched, in the reference colour: no model's colour (each run has one in the per-run view).
BASELINE_MARKER = {"color": "white", "pattern": {"shape": "/", "fgcolor": REFERENCE_COLOUR},
                   "line": {"color": REFERENCE_COLOUR, "width": 1}}

filters = open_page("Discrimination: humans vs models, item by item")
per_run = st.toggle("One model population per run", key="discrimination.per_run",
                    help="Off: the DI ranks every selected run's patterns together. On: each run "
                         "(or pooled model) ranks its own patterns, one bar colour each.")


def bin_of(values: pd.Series) -> pd.Series:
    """Lower edge of each value's DI bin (bins of 0.1 on [−1, 1])."""
    shifted = np.nan_to_num(values.to_numpy(float) + 1.0)
    index = np.clip(np.floor(shifted / BIN_WIDTH + 1e-9), 0, len(BIN_EDGES) - 2)
    return pd.Series(np.where(values.notna(), BIN_EDGES[index.astype(int)], np.nan),
                     index=values.index)


tables = []
patterns_per_area, baseline_per_area = {}, {}
#: DI column of each population: humans, every selected run together, each run, and the
#: random baseline's runs together.
columns: dict[str, str] = {"humans": "human_di", "models": "model_di", BASELINE: "random_di"}
random_labels = set(paper_queries.random_series())
model_labels = [m for m in filters.models if m not in random_labels]
baseline_labels = [m for m in filters.models if m in random_labels]
for area in filters.areas:
    items = queries.area_items(filters.year, area)
    args = (filters.year, area, filters.booklet_for(area), filters.language, filters.shots)
    long = queries.model_pattern_matrix(*args, model_labels, filters.pooled)
    model_di, patterns_per_area[area] = model_item_di(long, GROUP_FRACTION)
    baseline = queries.model_pattern_matrix(*args, baseline_labels, filters.pooled)
    random_di, baseline_per_area[area] = model_item_di(baseline, GROUP_FRACTION)
    frame = pd.DataFrame({
        "area": area, "item_id": items["item_id"].to_numpy(), "skill": items["skill"].to_numpy(),
        "a": items["a"].to_numpy(), "b": items["b"].to_numpy(),
        "human_p_value": items["p_value"].to_numpy(), "human_di": items["di"].to_numpy(),
        "model_di": model_di.reindex(items["item_id"]).to_numpy(),
        "random_di": random_di.reindex(items["item_id"]).to_numpy(),
    })
    if per_run:
        for series, rows in long.groupby("model", sort=True):
            columns.setdefault(series, f"DI · {series}")
            frame[columns[series]] = model_item_di(rows, GROUP_FRACTION)[0].reindex(
                items["item_id"]).to_numpy()
    tables.append(frame)
table = pd.concat(tables, ignore_index=True)
if not per_run:
    table = table[[c for c in table if not c.startswith("DI · ")]]
# Humans are a population only where the store has their DI (a year stored from its item file
# alone has none: no grey bars, legend entry or picker choice that would stand for nothing).
with_humans = bool(table["human_di"].notna().any())
populations = ((["humans"] if with_humans else [])
               + ([s for s in columns if s not in ("humans", "models", BASELINE)]
                  if per_run else ["models"]) + [BASELINE])
model_populations = [p for p in populations if p not in ("humans", BASELINE)]
styles = series_styles(model_populations, filters.series_order) if per_run else {}
points_present = pd.DataFrame({"area": [a for a in filters.areas
                                        if patterns_per_area[a] or baseline_per_area[a]]})
note_missing_runs(filters, points_present)


def population_marker(population: str) -> dict:
    """The bars' marker of a population: its colour, or the baseline's hatching."""
    if population == BASELINE:
        return BASELINE_MARKER
    colour, symbol = (styles[population] if per_run and population in styles
                      else (HUMAN_COLOUR if population == "humans" else OKABE_ITO[0], ""))
    # Runs of one model share its colour; their bars differ by hatching.
    return {"color": with_alpha(colour, 0.75), "pattern": bar_pattern(symbol_pattern(symbol))}


def population_patterns(population: str, area: str) -> int:
    """Patterns ranked in a model population of ``area`` (0: nothing to draw)."""
    return baseline_per_area[area] if population == BASELINE else patterns_per_area[area]

figure = area_grid(filters.areas, columns=2, row_height=300, vertical_spacing=0.2)
trace_keys: list[tuple[str, str]] = []  # (area, population) of each trace, for clicks
shown_legend: set[str] = set()
for index, area in enumerate(filters.areas):
    row, col = panel(index, 2)
    part = table[table["area"] == area]
    tallest = 0
    for population in populations:
        values = part.get(columns[population])
        if population != "humans" and (population_patterns(population, area) == 0
                                       or values is None or values.isna().all()):
            continue
        counts = bin_of(values).value_counts().reindex(BIN_EDGES[:-1], fill_value=0)
        figure.add_trace(go.Bar(
            x=counts.index + BIN_WIDTH / 2, y=counts.to_numpy(),
            name=population, legendgroup=population, showlegend=population not in shown_legend,
            marker=population_marker(population), offsetgroup=population,
            customdata=np.column_stack([counts.index, counts.index + BIN_WIDTH]),
            hovertemplate=(f"{population}: %{{y}} items with DI in "
                           "[%{customdata[0]:.1f}, %{customdata[1]:.1f})<extra></extra>"),
        ), row=row, col=col)
        trace_keys.append((area, population))
        shown_legend.add(population)
        tallest = max(tallest, int(counts.max()))
    figure.add_vline(x=GOOD_DI, line={"color": REFERENCE_COLOUR, "dash": "dash", "width": 1},
                     annotation_text="DI = 0.2", annotation_position="top right", row=row,
                     col=col)
    figure.update_xaxes(title_text="discrimination index (top 25% − bottom 25%, proportion)",
                        range=[-1, 1], row=row, col=col)
    # Headroom above the tallest bar, so it does not end on the frame nor run under the
    # "DI = 0.2" label at the top.
    figure.update_yaxes(title_text="items", range=[0, max(tallest, 1) * 1.18], row=row, col=col)
# Side by side, not overlaid: a click then lands on the bar that was clicked.
figure.update_layout(barmode="group", bargap=0.1)
event = show_figure(
    figure, key="discrimination.figure", file_stem=f"discrimination_{filters.year}",
    image_format=filters.image_format, data=table, on_select=True,
    caption=("Items per 0.1-wide DI bin: "
             + ("grey for humans (every candidate of the year), " if with_humans else
                f"no human bars ({filters.year} holds no candidates' answers), ")
             + ("one colour per run, each run's patterns ranked by θ on their own"
                if per_run else "blue for every selected model run's patterns ranked by θ "
                "together")
             + f" ({filters.prompt_label}). "
             + (f"The random baseline is no model: its runs' patterns "
                f"({', '.join(baseline_labels)}) are not pooled with the models, they are "
                f"ranked on their own and drawn as the hatched \"{BASELINE}\" bars: a "
                "reference for how discriminating items look when patterns of pure chance are "
                "ranked by the θ their own answers give. "
                if baseline_labels else
                "No random-baseline run is selected (it would be its own population, not "
                "pooled with the models). ")
             + "Right of the dashed line (DI > 0.2) an item separates strong from weak; click "
             "a bar to list its items below." + filters.provenance),
)

st.subheader("The items behind each bar")
summary = table.groupby("area").agg(
    items=("item_id", "size"),
    human_good=("human_di", lambda v: int((v > GOOD_DI).sum())),
    model_good=("model_di", lambda v: int((v > GOOD_DI).sum())),
    model_missing=("model_di", lambda v: int(v.isna().sum())),
    random_good=("random_di", lambda v: int((v > GOOD_DI).sum())),
    **{f"good · {s}": (columns[s], lambda v: int((v > GOOD_DI).sum()))
       for s in model_populations if per_run},
).reset_index()
summary["patterns_ranked"] = summary["area"].map(patterns_per_area)
summary["random_patterns_ranked"] = summary["area"].map(baseline_per_area)
# A count of 0 would claim that population was looked at: leave out the humans' columns in a
# year without candidates and the baseline's when no random-baseline run is selected.
absent = ((["human_good"] if not with_humans else [])
          + (["random_good", "random_patterns_ranked"] if not baseline_labels else []))
summary = summary.drop(columns=absent)
st.dataframe(summary, hide_index=True, placeholder="—", column_config={
    "human_good": "humans: items with DI > 0.2", "model_good": "models: items with DI > 0.2",
    "model_missing": "models: no DI", "patterns_ranked": "model patterns ranked",
    "random_good": "random baseline: items with DI > 0.2",
    "random_patterns_ranked": "random-baseline patterns ranked"})

selected = event.selection.points if event is not None and hasattr(event, "selection") else []
bins = ["all"] + [f"{edge:.1f}" for edge in BIN_EDGES[:-1]]
clicked = selected[0] if selected else None
if clicked is not None and repr(clicked) != st.session_state.get("discrimination.clicked"):
    # A new click sets the pickers (once, so they stay free to change afterwards).
    st.session_state["discrimination.clicked"] = repr(clicked)
    curve = int(clicked.get("curve_number", -1))
    if 0 <= curve < len(trace_keys):
        st.session_state["discrimination.area"], st.session_state["discrimination.population"] = \
            trace_keys[curve]
        st.session_state["discrimination.bin"] = f"{float(clicked['x']) - BIN_WIDTH / 2:.1f}"
if st.session_state.get("discrimination.population") not in populations:
    st.session_state.pop("discrimination.population", None)
left, mid, right = st.columns(3)
area_choice = left.selectbox("Area", list(filters.areas), key="discrimination.area")
population = mid.selectbox("Bar of", populations, key="discrimination.population")
bin_choice = right.selectbox("DI bin (lower edge)", bins, key="discrimination.bin")
shown = table[table["area"] == area_choice]
if bin_choice != "all":
    shown = shown[np.isclose(bin_of(shown[columns[population]]), float(bin_choice))]
# Columns with no value at all (no candidates, no baseline run) are left out; the remaining
# gaps (an item a population has no DI for) read "—", not "None".
shown = shown.sort_values("b", na_position="last")
shown = shown[[c for c in shown.columns
               if c == "area" or shown.empty or shown[c].notna().any()]]
st.dataframe(shown, hide_index=True, width="stretch", placeholder="—",
             column_config={
                 "human_di": st.column_config.NumberColumn("human DI", format="%.3f"),
                 "model_di": st.column_config.NumberColumn("model DI", format="%.3f"),
                 "random_di": st.column_config.NumberColumn("random-baseline DI",
                                                            format="%.3f"),
                 "human_p_value": st.column_config.NumberColumn("human p", format="%.3f"),
                 "a": st.column_config.NumberColumn(format="%.3f"),
                 "b": st.column_config.NumberColumn(format="%.3f"),
             })
st.caption(f"{len(shown)} items of {area_choice}"
           + ("" if bin_choice == "all" else f" whose {population} DI lies in "
              f"[{float(bin_choice):.1f}, {float(bin_choice) + BIN_WIDTH:.1f})")
           + "; open one in the Item explorer to see its curve and options.")
