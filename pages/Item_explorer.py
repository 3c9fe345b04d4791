"""Item explorer: one item in full — its text, parameters, curve, who picks which option.

The item comes from the URL (``?item=CO_ITEM&area=CN``, which the Response patterns page uses
to open an item) or from the pickers below. Link handling, details and figures:
``dashboard.item_explorer``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import queries
from dashboard.figures import show_figure
from dashboard.item_explorer import details, picker
from dashboard.item_explorer.curves import curve_caption, curve_figure
from dashboard.item_explorer.fit import show_fit
from dashboard.item_explorer.option_curves import option_curve_caption, option_curve_figure
from dashboard.item_explorer.options import option_caption, option_figure
from dashboard.items.tables import GAP_AREA_PARAM
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.state.selection import information_booklet
from dashboard.summaries import model_item_di
from enem.areas import AREA_NAMES, AREAS
from workflows.views import ITEM_GAPS

filters = open_page("Item explorer")
not_in_year = picker.read_link(filters.year)
missing_item = (f"The link asks for item {not_in_year}, but item {not_in_year} is not in "
                f"{filters.year} (no booklet of that year holds it)")

left, right = st.columns([1, 3])
area = left.selectbox("Area", list(AREAS), key=picker.AREA_KEY,
                      format_func=lambda a: f"{a} — {AREA_NAMES[a]}")
items = queries.area_items(filters.year, area)
selection = (filters.models, filters.pooled)
# Every selected run's answers in the area: which items they answered (the pickers say so) and
# the model DI below.
long = queries.model_pattern_matrix(filters.year, area, None, filters.language, filters.shots,
                                    *selection)
answered = set(long["item_id"].astype(int)) if len(long) else set()
# The booklet the page opens on: the sidebar's, else the one the runs answered most, else the
# one most candidates took. A year has several applications whose booklets hold other items,
# and the lowest position of the area often belongs to one that nobody in the selection took.
opening_booklet = information_booklet(filters, area)
if items.empty:
    if not_in_year is not None:
        st.warning(f"{missing_item}; nothing to show.")
    st.info(f"No items of {area} in {filters.year}: ingest that year's ITENS_PROVA file.")
    st.stop()
labels = picker.item_labels(items, answered, filters.has_humans)
default = picker.opening_item(filters.year, items, opening_booklet, answered)
if not_in_year is not None:
    st.warning(f"{missing_item}; showing item {default} instead.")
picker.keep_or_open(labels, default)
item_id = right.selectbox("Item (first position in any booklet)", list(labels),
                          format_func=labels.__getitem__, key=picker.ITEM_KEY)
picker.write_link(item_id, area)

item = items[items["item_id"] == item_id].iloc[0]
st.subheader(f"Item {item_id} — {AREA_NAMES[area]}")
details.show_parameters(item)
show_fit(filters, area, item, opening_booklet)
st.page_link(ITEM_GAPS.file, label=f"Items of {area} the selected runs find much easier or "
             "harder than humans of their ability: Item gaps", icon=":material/compare_arrows:",
             query_params={GAP_AREA_PARAM: area})
details.warn_if_abandoned(filters.year, item)
details.show_texts(queries.item_texts(filters.year, item_id))

model_theta = queries.model_item_theta(filters.year, item_id, filters.language, filters.shots,
                                       *selection)
choices = queries.model_item_choices(filters.year, item_id, filters.language, filters.shots,
                                     *selection)
if long.empty:
    note_missing_runs(filters, pd.DataFrame({"area": []}), (area,))
elif model_theta.empty:
    st.info(picker.unanswered_message(filters, item_id, area))
details.show_statistics(item, *model_item_di(long))

# Item characteristic curve and information.
empirical = queries.item_icc(filters.year, item_id)
curves = curve_figure(item, empirical, model_theta, filters.series_order)
show_figure(
    curves.figure, key="explorer.curve", file_stem=f"item_{item_id}_curve",
    image_format=filters.image_format, data=curves.data,
    caption=curve_caption(len(empirical) > 0, len(model_theta) > 0, filters.prompt_label,
                          filters.provenance),
)

# Which option do they pick?
human_options = queries.item_option_counts(filters.year, item_id)
bars = option_figure(item["key"], human_options, choices, filters.series_order)
st.subheader("Which option is chosen")
show_figure(
    bars.figure, key="explorer.options", file_stem=f"item_{item_id}_options",
    image_format=filters.image_format, data=bars.data,
    caption=option_caption(item["key"], len(human_options) > 0, len(choices) > 0,
                           filters.provenance),
)

st.subheader("Option characteristic curves")
option_counts = queries.item_option_theta_counts(filters.year, item_id)
option_curves = option_curve_figure(item["key"], option_counts, choices, model_theta)
show_figure(
    option_curves.figure, key="explorer.option_curves",
    file_stem=f"item_{item_id}_option_curves", image_format=filters.image_format,
    data=option_curves.data,
    caption=option_curve_caption(item["key"], len(option_counts) > 0, len(model_theta) > 0,
                                 filters.provenance),
)
