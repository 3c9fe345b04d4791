"""Home: what is loaded, and where each model's θ falls in the human θ distribution."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dashboard import queries
from dashboard.figures import area_title, empty_panel, series_styles, show_figure
from dashboard.palette import HUMAN_COLOUR, with_alpha
from dashboard.state import open_page

#: The θ axis in words. The N(0, 1) of INEP's recipe is the prior of the calibration's
#: reference population, not the year's candidates (the histogram shows theirs).
THETA_AXIS = "θ (ability, logits, on the scale of INEP's item parameters)"
#: Heights in pixels: a histogram, one model lane, the strip's axis, the gap between areas.
HISTOGRAM_PX, LANE_PX, STRIP_AXIS_PX, GAP_PX = 190, 22, 40, 95
LANE_LABEL_CHARS = 34


def lane_label(model: str) -> str:
    """A model's lane label, shortened (the hover and the legend give the full name)."""
    return model if len(model) <= LANE_LABEL_CHARS else model[:LANE_LABEL_CHARS - 1] + "…"


st.set_page_config(page_title="ENEM × LLM: does the score mean the same?")
filters = open_page("When an LLM passes ENEM, does its score mean what it means for a human?")
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

booklets = queries.booklet_catalogue(filters.year)
columns = st.columns(6)
columns[0].metric("Years loaded", len(overview), help=", ".join(map(str, overview["year"])))
columns[1].metric(f"Areas in {filters.year}", booklets["area"].nunique(),
                  help=", ".join(sorted(booklets["area"].unique())))
columns[2].metric("Candidates", f"{int(overview['candidates'].sum()):,}")
columns[3].metric("Items", f"{int(overview['items'].sum()):,}")
columns[4].metric("Models", len(catalogue))
columns[5].metric("Runs", int(catalogue["runs"].sum()) if len(catalogue) else 0)
st.dataframe(overview, hide_index=True, width="stretch")

st.subheader(f"Model θ against the human θ distribution — {filters.year}")
points = queries.model_points(filters.year, None, None, filters.language, filters.shots,
                              filters.models, filters.pooled)
if points.empty:
    st.info(filters.no_runs_message())
styles = series_styles(points["model"].unique(), filters.series_order) if len(points) else {}
lanes = sorted(points["model"].unique()) if len(points) else []

# Per area, two panels on one θ axis: the humans' histogram, and under it a strip with one
# lane per model where each tick is one repetition's θ (the models have no "% of candidates").
heights, titles, hist_rows, gap_rows = [], [], {}, []
for index, area in enumerate(filters.areas):
    if index:
        heights.append(GAP_PX)
        titles.append("")
        gap_rows.append(len(heights))
    hist_rows[area] = len(heights) + 1
    heights += [HISTOGRAM_PX, LANE_PX * max(1, len(lanes)) + STRIP_AXIS_PX]
    titles += [area_title(area), ""]
margin = {"t": 60, "b": 10, "l": 10, "r": 20}
height = sum(heights) + margin["t"] + margin["b"]
figure = make_subplots(rows=len(heights), cols=1, row_heights=heights, vertical_spacing=0.0,
                       subplot_titles=titles)
figure.update_layout(height=height, margin=margin, barmode="overlay",
                     legend={"orientation": "h", "yanchor": "bottom", "x": 0,
                             "y": 1.0 + 30.0 / (height - margin["t"] - margin["b"])})
for row in gap_rows:
    figure.update_xaxes(visible=False, row=row, col=1)
    figure.update_yaxes(visible=False, row=row, col=1)
legend_shown: set[str] = set()
exported = []
for area in filters.areas:
    row = hist_rows[area]
    strip = row + 1
    hist = queries.human_theta_histogram(*filters.human_args(area))
    # The strip shares the histogram's θ axis; only the strip shows the θ ticks and title.
    shared = figure.get_subplot(row, 1).xaxis.plotly_name.replace("axis", "")
    figure.update_xaxes(matches=shared, showticklabels=False, row=row, col=1)
    figure.update_xaxes(matches=shared, title_text=THETA_AXIS, title_standoff=4, row=strip,
                        col=1)
    figure.update_yaxes(title_text="% of candidates<br>per 0.1 θ", row=row, col=1)
    if hist.empty:
        # No humans (an items-only year, or a filter that leaves none): the models still show
        # in their lanes, and the note sits where the histogram would be.
        empty_panel(figure, row, 1, f"no scored candidates in {area}")
        figure.update_yaxes(showticklabels=False, title_text="", row=row, col=1)
    else:
        share = 100.0 * hist["n"] / hist["n"].sum()
        figure.add_trace(go.Bar(x=hist["theta_bin"] + 0.05, y=share, width=0.1, name="humans",
                                marker_color=with_alpha(HUMAN_COLOUR, 0.55),
                                showlegend="humans" not in legend_shown, legendgroup="humans",
                                hovertemplate="θ %{x:.2f}: %{y:.2f}% of candidates"
                                              "<extra></extra>"),
                         row=row, col=1)
        legend_shown.add("humans")
        exported.append(hist.assign(area=area, share_percent=share, kind="humans"))
    in_area = points[points["area"] == area] if len(points) else points
    for model, group in (in_area.groupby("model", sort=True) if len(in_area) else []):
        colour, _ = styles[model]
        figure.add_trace(go.Scatter(
            x=group["theta"], y=[model] * len(group), mode="markers",
            marker={"symbol": "line-ns-open", "size": LANE_PX - 6, "color": colour,
                    "line": {"color": with_alpha(colour, 0.75), "width": 2}},
            name=model, legendgroup=model, showlegend=model not in legend_shown,
            customdata=group[["run_id", "shuffle", "theta_se", "lz", "ctt"]].to_numpy(object),
            hovertemplate=(f"<b>{model}</b><br>θ = %{{x:.3f}} (SE %{{customdata[2]:.3f}})"
                           "<br>shuffle %{customdata[1]} · l_z %{customdata[3]:.2f} · "
                           "CTT %{customdata[4]}<extra></extra>")), row=strip, col=1)
        legend_shown.add(model)
        exported.append(group.assign(kind="model"))
    if lanes:
        figure.update_yaxes(type="category", categoryorder="array",
                            categoryarray=list(reversed(lanes)),
                            range=[-0.6, len(lanes) - 0.4], tickmode="array",
                            tickvals=lanes, ticktext=[lane_label(m) for m in lanes],
                            showgrid=True, automargin=True, row=strip, col=1)
    else:
        empty_panel(figure, strip, 1, "no model runs in this selection")
        figure.update_yaxes(visible=False, row=strip, col=1)
table = pd.concat(exported, ignore_index=True) if exported else pd.DataFrame()
show_figure(
    figure, key="home.theta", file_stem=f"theta_overview_{filters.year}",
    image_format=filters.image_format, data=table,
    caption=(f"Grey bars: share of {filters.group_label} per 0.1-wide θ bin. Under them, one "
             f"lane per model: each tick is the θ of one repetition (shuffle or seed; "
             f"{filters.prompt_label}) on the same θ axis. A model's ticks right of the crowd "
             "mean it scores like a top human on this area. θ is on the scale of INEP's item "
             "parameters: the N(0, 1) of the scoring recipe is the prior (the calibration's "
             "reference population), not this year's candidates, whose distribution the bars "
             "show." + filters.provenance),
)
st.markdown(
    "Pages: **Accuracy vs ability** (CTT vs θ), **Person fit** (l_z vs θ), **Response "
    "patterns**, **Test information**, **Discrimination**, **Item explorer**, **Data** (what "
    "was ingested) and **Runs** (launch and follow model runs). The sidebar filters apply to "
    "every page and live in the URL.")
