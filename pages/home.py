"""Home: what is loaded, where each model's θ falls in the human θ distribution, and which
pages to open next.

A first-time reader sees a histogram and ticks and no question; the short guide above the
figure says what the figure shows and names the four pages that test whether a model's θ means
what a human's does. It stays a few lines high so the figure still starts inside a 1440×900
window. A store without real candidates (empty, the synthetic demo, item files only) also
offers real data, collapsed above the figure (``dashboard.fetch_offer``)."""

from __future__ import annotations

import streamlit as st

from dashboard import fetch_offer, queries
from dashboard.figures import series_styles, show_figure
from dashboard.lane_figure import histogram_with_lanes
from dashboard.patterns.data import short_labels
from dashboard.state.frame import no_runs_message, open_page
from workflows.views import HOME, SECTIONS, VIEWS, View

#: The θ axis in words. The N(0, 1) of INEP's recipe is the prior of the calibration's
#: reference population, not the year's candidates (the histogram shows theirs).
THETA_AXIS = "θ (ability, logits, on the scale of INEP's item parameters)"

#: Where to go after the figure: (url_path of the view, icon, the question it answers).
NEXT_STEPS: tuple[tuple[str, str, str], ...] = (
    ("Accuracy_vs_ability", ":material/scatter_plot:", "Which items does it get right?"),
    ("Person_fit", ":material/fingerprint:", "Could a person answer like that?"),
    ("Test_information", ":material/straighten:", "How precise is θ where it lands?"),
    ("Populations", ":material/groups:", "Which groups of people is it like?"),
)


def next_step_views() -> list[View]:
    """The views :data:`NEXT_STEPS` names, in that order (looked up in the navigation, so a
    renamed title follows)."""
    by_path = {view.url_path: view for view in VIEWS}
    return [by_path[path] for path, _, _ in NEXT_STEPS]


TITLE = "When an LLM passes ENEM, does its score mean what it means for a human?"

st.set_page_config(page_title="ENEM × LLM: does the score mean the same?")
fetch_offer.offer_on_empty_store(TITLE)  # an empty store: the offer of real data, then stop
filters = open_page(TITLE)
overview = queries.overview()
synthetic = queries.is_synthetic()
catalogue = filters.catalogue

if synthetic:
    st.info("You are looking at the **synthetic demo**: generated candidates and the project's own "
            "demo questions in INEP's file formats. No real exam content or real person is shown.")
elif filters.has_humans:
    st.caption("Real INEP microdata, ingested with `enem-llm ingest-enem` (see the Data "
               "page for files and row counts).")
else:
    st.caption(f"Real INEP item parameters of {filters.year}, stored with `enem-llm "
               "ingest-items` (see the Data page for files).")
# Real data to add (only on a store without real candidates) and a fetch's progress.
fetch_offer.real_data_section(overview=overview)

booklets = queries.booklet_catalogue(filters.year)
columns = st.columns(6)
columns[0].metric("Years loaded", len(overview), help=", ".join(map(str, overview["year"])))
columns[1].metric(f"Areas in {filters.year}", booklets["area"].nunique(),
                  help=", ".join(sorted(booklets["area"].unique())))
columns[2].metric("Candidates", f"{int(overview['candidates'].sum()):,}")
columns[3].metric("Items", f"{int(overview['items'].sum()):,}")
columns[4].metric("Models", catalogue["model_id"].nunique() if len(catalogue) else 0)
columns[5].metric("Runs", int(catalogue["runs"].sum()) if len(catalogue) else 0)

shown = (f"grey bars are {filters.group_label} of {filters.year}, each tick under them one "
         "repetition of a model" if filters.has_humans else
         f"each tick is one repetition of a model (no candidates of {filters.year} are loaded, "
         "so no grey bars)")
st.markdown(f"**Where to start.** The figure below is ability θ on the exam's own scale: "
            f"{shown}. Then ask whether a model's θ means what a person's θ means:")
for column, view, (_, icon, question) in zip(st.columns(len(NEXT_STEPS)), next_step_views(),
                                              NEXT_STEPS, strict=True):
    with column:
        st.page_link(view.file, label=view.title, icon=icon)
        st.caption(question)

humans_stored = filters.has_humans
st.subheader(f"Model θ against the human θ distribution — {filters.year}" if humans_stored
             else f"Model θ per area — {filters.year}")
points = queries.model_points(filters.year, None, None, filters.language, filters.shots,
                              filters.models, filters.pooled)
if points.empty:
    st.info(no_runs_message(filters))
styles = series_styles(points["model"].unique(), filters.series_order) if len(points) else {}
lane_names, shared_tail = short_labels(sorted(points["model"].unique()) if len(points) else [])
histograms = {area: queries.human_theta_histogram(*filters.human_args(area)).rename(
    columns={"theta_bin": "bin"}) for area in filters.areas}
figure, table = histogram_with_lanes(
    filters.areas, histograms, points, "theta", bin_width=0.1, styles=styles,
    x_title=THETA_AXIS, human_label="humans", lane_names=lane_names)
show_figure(
    figure, key="home.theta", file_stem=f"theta_overview_{filters.year}",
    image_format=filters.image_format, data=table,
    caption=((f"Grey bars: share of {filters.group_label} per 0.1-wide θ bin. Under them, one "
              if humans_stored else
              f"This store holds no candidates of {filters.year} (its item file only), so no "
              "human distribution is drawn: one ")
             + f"lane per model: each tick is the θ of one repetition (shuffle or seed; "
             f"{filters.prompt_label}"
             + (f"; every lane's run is {shared_tail}" if shared_tail else "")
             + ") on the same θ axis. A model's ticks right of the crowd "
             "mean it scores like a top human on this area. θ is on the scale of INEP's item "
             "parameters: the N(0, 1) of the scoring recipe is the prior (the calibration's "
             "reference population)"
             + (", not this year's candidates, whose distribution the bars show."
                if humans_stored else ".") + filters.provenance),
)
st.dataframe(overview, hide_index=True, width="stretch", placeholder="—")
sections = {section: [v.title for v in VIEWS if v.section == section and v is not HOME]
            for section in SECTIONS}
st.markdown("Pages — " + "; ".join(f"**{section}**: {', '.join(titles)}"
                                   for section, titles in sections.items() if titles)
            + ". The sidebar's filters apply to every page and live in the URL.")
