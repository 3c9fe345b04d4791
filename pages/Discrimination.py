"""Discrimination (the paper's Fig. 5): do items separate strong from weak *models* as they do
humans?

The discrimination index of an item is the proportion correct in the top 25% minus the bottom
25% of a population ranked by θ (numbers and figure: ``dashboard.discrimination``). For humans the
population is every candidate; for models it is every model response pattern (model × run × shuffle)
in the sidebar's selection, or each run's patterns on their own (the page's switch). The random
baseline (backend ``random``) is no model: its patterns are never pooled with the models', they are
ranked on their own and drawn as a population of their own.
"""

from __future__ import annotations

import streamlit as st

from dashboard import discrimination as di
from dashboard.figures import show_figure
from dashboard.state.frame import note_missing_runs, open_page

filters = open_page("Discrimination: humans vs models, item by item")
per_run = st.toggle("One model population per run", key="discrimination.per_run",
                    help="Off: the DI ranks every selected run's patterns together. On: each run "
                         "(or pooled model) ranks its own patterns, one bar colour each.")
data = di.load_discrimination(
    filters.year, filters.areas, {area: filters.booklet_for(area) for area in filters.areas},
    filters.language, filters.shots, filters.models, filters.pooled, per_run)
note_missing_runs(filters, di.areas_with_patterns(data, filters.areas))

figure, trace_keys = di.discrimination_figure(data, filters.areas, filters.series_order)
event = show_figure(
    figure, key="discrimination.figure", file_stem=f"discrimination_{filters.year}",
    image_format=filters.image_format, data=data.table, on_select=True,
    caption=di.discrimination_caption(data, filters.year, filters.prompt_label,
                                      filters.provenance),
)

st.subheader("The items behind each bar")
good = f"items with DI > {di.GOOD_DI:g}"
st.dataframe(di.good_items_summary(data), hide_index=True, placeholder="—", column_config={
    "human_good": f"humans: {good}", "model_good": f"models: {good}",
    "model_missing": "models: no DI", "patterns_ranked": "model patterns ranked",
    "random_good": f"random baseline: {good}",
    "random_patterns_ranked": "random-baseline patterns ranked"})

populations = data.populations
selected = event.selection.points if event is not None and hasattr(event, "selection") else []
clicked = selected[0] if selected else None
if clicked is not None and repr(clicked) != st.session_state.get("discrimination.clicked"):
    # A new click sets the pickers (once, so they stay free to change afterwards).
    st.session_state["discrimination.clicked"] = repr(clicked)
    curve = int(clicked.get("curve_number", -1))
    if 0 <= curve < len(trace_keys):
        st.session_state["discrimination.area"], st.session_state["discrimination.population"] = \
            trace_keys[curve]
        st.session_state["discrimination.bin"] = f"{float(clicked['x']) - di.BIN_WIDTH / 2:.1f}"
if st.session_state.get("discrimination.population") not in populations:
    st.session_state.pop("discrimination.population", None)
left, mid, right = st.columns(3)
area_choice = left.selectbox("Area", list(filters.areas), key="discrimination.area")
population = mid.selectbox("Bar of", populations, key="discrimination.population")
bin_choice = right.selectbox("DI bin (lower edge)",
                             ["all"] + [f"{edge:.1f}" for edge in di.BIN_EDGES[:-1]],
                             key="discrimination.bin")
# The remaining gaps (an item a population has no DI for) read "—", not "None".
shown = di.items_in_bin(data, area_choice, population, bin_choice)
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
st.caption(di.bin_caption(shown, area_choice, population, bin_choice))
