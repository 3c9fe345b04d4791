"""Home: what is loaded, and where each model's θ falls in the human θ distribution."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import queries
from dashboard.figures import THETA_TITLE, area_grid, empty_panel, panel, show_figure
from dashboard.palette import HUMAN_COLOUR, model_styles, with_alpha
from dashboard.state import open_page

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
                              filters.models)
if points.empty:
    st.info(filters.no_runs_message())
styles = model_styles(points["model"].unique()) if len(points) else {}
figure = area_grid(filters.areas, columns=2, row_height=300, vertical_spacing=0.2)
legend_shown: set[str] = set()
exported = []
for index, area in enumerate(filters.areas):
    row, col = panel(index, 2)
    hist = queries.human_theta_histogram(filters.year, area, filters.booklet_for(area),
                                         filters.group_kind, filters.group_value,
                                         filters.excluded)
    figure.update_xaxes(title_text=THETA_TITLE, row=row, col=col)
    figure.update_yaxes(title_text="% of candidates per 0.1 θ", row=row, col=col)
    if hist.empty:
        # No humans (an items-only year, or a filter that leaves none): the models still show,
        # one row each, and the note sits under them.
        empty_panel(figure, row, col, f"no scored candidates in {area}", y=0.04)
        figure.update_yaxes(showticklabels=False, title_text="", row=row, col=col)
        top = 1.0
    else:
        share = 100.0 * hist["n"] / hist["n"].sum()
        figure.add_trace(go.Bar(x=hist["theta_bin"] + 0.05, y=share, width=0.1, name="humans",
                                marker_color=with_alpha(HUMAN_COLOUR, 0.55),
                                showlegend="humans" not in legend_shown, legendgroup="humans",
                                hovertemplate="θ %{x:.2f}: %{y:.2f}% of candidates"
                                              "<extra></extra>"),
                         row=row, col=col)
        legend_shown.add("humans")
        exported.append(hist.assign(area=area, share_percent=share, kind="humans"))
        top = float(share.max())
    for offset, (model, group) in enumerate(
            points[points["area"] == area].groupby("model", sort=True)):
        colour, symbol = styles[model]
        figure.add_trace(go.Scatter(
            x=group["theta"], y=[top * (1.1 + 0.12 * offset)] * len(group), mode="markers",
            marker={"color": with_alpha(colour, 0.7), "symbol": symbol, "size": 7},
            name=model, legendgroup=model, showlegend=model not in legend_shown,
            customdata=group[["run_id", "shuffle", "theta_se", "lz", "ctt"]].to_numpy(object),
            hovertemplate=(f"<b>{model}</b><br>θ = %{{x:.3f}} (SE %{{customdata[2]:.3f}})"
                           "<br>shuffle %{customdata[1]} · l_z %{customdata[3]:.2f} · "
                           "CTT %{customdata[4]}<extra></extra>")), row=row, col=col)
        legend_shown.add(model)
        exported.append(group.assign(kind="model"))
figure.update_layout(barmode="overlay")
table = pd.concat(exported, ignore_index=True) if exported else pd.DataFrame()
show_figure(
    figure, key="home.theta", file_stem=f"theta_overview_{filters.year}",
    image_format=filters.image_format, data=table,
    caption=(f"Grey bars: share of {filters.group_label} per 0.1-wide θ bin; coloured markers "
             f"above them: each model's θ per repetition (shuffle or seed; "
             f"{filters.prompt_label}). A marker right "
             "of the crowd means the model scores like a top human on this area."
             + filters.provenance),
)
st.markdown(
    "Pages: **Accuracy vs ability** (CTT vs θ), **Person fit** (l_z vs θ), **Response "
    "patterns**, **Test information**, **Discrimination**, **Item explorer**, **Data** (what "
    "was ingested) and **Runs** (launch and follow model runs). The sidebar filters apply to "
    "every page and live in the URL.")
