"""Streamlit entry point: the home page. Run with ``streamlit run app.py``.

On first start with no database it builds the synthetic demo year (about half a minute).
"""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from enem.areas import AREA_NAMES, AREAS
from store import queries
from store.connection import connected, database_path

st.set_page_config(page_title="ENEM × LLM: does the score mean the same?", layout="wide")

DB_PATH = database_path()


@st.cache_resource(show_spinner=False)
def ensure_database() -> str:
    """Build the demo database once when none exists; returns its path."""
    if not DB_PATH.exists():
        from store.demo_build import build_demo_database

        with st.spinner("First start: generating and ingesting the synthetic demo year…"):
            build_demo_database(DB_PATH, progress=False)
    return str(DB_PATH)


@st.cache_data(show_spinner=False)
def load_overview(path: str):
    with connected(path, read_only=True) as con:
        return queries.overview(con), queries.is_synthetic(con), queries.model_counts(con)


@st.cache_data(show_spinner=False)
def load_theta_histograms(path: str, year: int):
    with connected(path, read_only=True) as con:
        return {area: queries.theta_histogram(con, year, area) for area in AREAS}


path = ensure_database()
overview, synthetic, (n_models, n_runs) = load_overview(path)

st.title("When an LLM passes ENEM, does its score mean what it means for a human?")
if synthetic:
    st.info("You are looking at the **synthetic demo**: generated candidates and the project's own "
            "demo questions in INEP's file formats. No real exam content or real person is shown.")

if overview.empty:
    st.warning("The database is empty: ingest a year with `python cli.py ingest-enem` "
               "or build the demo with `python cli.py demo`.")
    st.stop()

columns = st.columns(4)
columns[0].metric("Years loaded", len(overview))
columns[1].metric("Candidates", f"{int(overview['candidates'].sum()):,}")
columns[2].metric("Scored area records", f"{int(overview['scored_patterns'].sum()):,}")
columns[3].metric("Models / runs", f"{n_models} / {n_runs}")
st.dataframe(overview, hide_index=True)

year = int(st.selectbox("Year", overview["year"].tolist(), index=len(overview) - 1))
histograms = load_theta_histograms(path, year)
st.subheader("Human ability (θ) per area")
st.caption("Distribution of the EAP ability θ of every scored candidate (INEP recipe, N(0,1) "
           "prior, 40 points on [−4, 4]); bars are counts per 0.1-wide θ bin.")
chart_columns = st.columns(2)
for index, area in enumerate(AREAS):
    frame = histograms[area]
    figure = go.Figure(go.Bar(x=frame["theta_bin"] + 0.05, y=frame["n"], marker_color="#0072B2",
                              name="humans"))
    figure.update_layout(title=f"{area} — {AREA_NAMES[area]}", xaxis_title="θ (logits)",
                         yaxis_title="candidates", height=300, margin=dict(t=40, b=40))
    chart_columns[index % 2].plotly_chart(figure, width="stretch")
