"""Response patterns (the paper's Fig. 2): which items each model gets right, sorted by difficulty.

One area at a time (picked above the figure, kept in the URL's ``pattern_area=``): rows are
run series × prompt language (or one row per repetition), columns the items
sorted by IRT difficulty b with the b curve above, the humans' share correct on top and each
row's mean l_z (SD) at the right and ⚑ under the items whose 3PL curve misfits the humans
(S-X² on the booklet's candidates). A human-like pattern is dark on the left (easy items) and
fades to the right (hard items). Data, figure and caption: ``dashboard.patterns``.
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard import queries
from dashboard.figures import area_title, show_figure
from dashboard.patterns.captions import panel_caption
from dashboard.patterns.data import load_panel, panel_table, short_labels
from dashboard.patterns.figure import pattern_figure
from dashboard.state.frame import no_runs_message, open_page
from dashboard.state.url import seed_page_choice, write_page_choice
from inference.protocol import PROMPT_LANGUAGE_NAMES
from workflows.views import ITEM_EXPLORER

#: The URL's name for the area shown.
PATTERN_AREA_PARAM = "pattern_area"

filters = open_page("Response patterns: models × items sorted by difficulty")
st.caption("Both prompt languages are shown as rows; the sidebar's areas, booklet, number of "
           "shots and models apply (the booklet decides the item positions; models' answers "
           "are placed on it through the item ids).")
per_repetition = st.toggle(
    "One row per repetition (shuffle or seed)", key="patterns.expand",
    help="Off: each row pools a run series' repetitions into the share answered correctly. "
         "On: each repetition of each run is its own row of right (black) and wrong (white).")
if not filters.has_humans:
    st.info(f"No human row: {filters.year} holds only its item file, so there is no share of "
            "candidates answering each item correctly.")

catalogue = filters.catalogue
words = ({} if catalogue.empty or "repetition" not in catalogue else
         dict(zip(catalogue["model_id" if filters.pooled else "model"], catalogue["repetition"],
                  strict=True)))
names, shared_tail = short_labels(filters.series)
clicked: tuple[str, int] | None = None
# One area's figure at a time: each is a heatmap with an invisible marker over every cell (its
# hover and clicks), and four of them cost the browser about half a second more to draw.
seed_page_choice(PATTERN_AREA_PARAM, list(filters.areas), "patterns.area",
                 default=filters.areas[0])
# Seeded above and required, so never None (the fallback is the seed's default).
area = st.segmented_control("Area", list(filters.areas), key="patterns.area",
                            format_func=area_title, required=True,
                            help="The area whose items the figure below shows.") or filters.areas[0]
write_page_choice(PATTERN_AREA_PARAM, "patterns.area")
panel = load_panel(
    filters.year, area, filters.booklet_for(area), filters.shots, filters.models,
    pooled=filters.pooled, per_repetition=per_repetition, with_humans=filters.has_humans,
    names=names, repetition_words=words)
if panel is None:
    st.info(no_runs_message(filters, area, "pt or en"))
    st.stop()
missing = [lang for lang in PROMPT_LANGUAGE_NAMES if lang not in panel.languages]
if missing:
    st.info(f"No model run answered {filters.year} {area} with "
            f"{' or '.join(PROMPT_LANGUAGE_NAMES[lang] for lang in missing)} prompts "
            f"({filters.shots_words}): the figure has no rows in that language.")
humans_note = ""
if filters.has_humans and panel.human is None:
    humans_note = f" No human row: no item statistics are stored for {area}."
    st.info(f"No human row for {area}: the store holds no share correct for its items.")
event = show_figure(
    pattern_figure(panel), key=f"patterns.{area}",
    file_stem=f"response_patterns_{filters.year}_{area}", image_format=filters.image_format,
    # The CSV's long table is built only when its button is clicked.
    on_select=True, data=partial(panel_table, panel),
    caption=panel_caption(panel, filters.shots_words, shared_tail, filters.provenance,
                          humans_note),
)
points = event.selection.points if event is not None and hasattr(event, "selection") else []
if points and str(points[0].get("x", "")).isdigit():
    clicked = (area, int(points[0]["x"]))

st.subheader("Open an item in the item explorer")
left, right = st.columns([3, 1])
items = queries.area_items(filters.year, area).sort_values("b", na_position="last")
descriptions = {(area, int(row.item_id)): f"{area} · item {row.item_id} · b = {row.b:.2f}"
                for row in items.itertuples()}
options = list(descriptions)
choice = left.selectbox(f"Item of {area} (sorted by b)", options,
                        format_func=descriptions.__getitem__, key="patterns.item")
if right.button("Open in the item explorer", key="patterns.open", width="stretch"):
    clicked = choice
if clicked is not None:
    st.switch_page(ITEM_EXPLORER.file, query_params={"item": str(clicked[1]), "area": clicked[0]})
