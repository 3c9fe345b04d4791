"""Response patterns (the paper's Fig. 2): which items each model gets right, sorted by difficulty.

A human-like pattern is dark on the left (easy items) and fades to the right (hard items). Cells
are the fraction of a model's shuffles (and runs) that answered the item correctly.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dashboard import queries
from dashboard.figures import area_title, show_figure
from dashboard.navigation import ITEM_EXPLORER
from dashboard.palette import CORRECT_SCALE
from dashboard.state import note_missing_runs, open_page
from inference.protocol import PROMPT_LANGUAGE_NAMES, PROMPT_LANGUAGES

filters = open_page("Response patterns: models × items sorted by difficulty")
st.caption("Both prompt languages are shown side by side; the sidebar's number of shots, models "
           "and booklet apply.")

clicked: tuple[str, int] | None = None
answered = [area for area in filters.areas
            if len(queries.model_item_correct(filters.year, area, None, filters.shots,
                                              filters.models))]
note_missing_runs(filters, pd.DataFrame({"area": answered}), language="pt or en")
for area in answered:
    items = queries.area_items(filters.year, area)
    cells = queries.model_item_correct(filters.year, area, None, filters.shots,
                                       filters.models)
    cells = cells.merge(items[["item_id", "b", "a", "skill", "first_position"]], on="item_id",
                        how="left")
    order = (cells.drop_duplicates("item_id")
             .sort_values(["b", "item_id"], na_position="last")["item_id"].astype(str).tolist())
    cells["fraction"] = cells["correct"] / cells["answers"]
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                           subplot_titles=[PROMPT_LANGUAGE_NAMES[lang] for lang in PROMPT_LANGUAGES])
    models = sorted(cells["model"].unique())
    for col, language in enumerate(PROMPT_LANGUAGES, start=1):
        part = queries.model_item_correct(filters.year, area, language, filters.shots,
                                          filters.models)
        part = part.merge(items[["item_id", "b"]], on="item_id", how="left")
        part["fraction"] = part["correct"] / part["answers"]
        grid = (part.assign(item=part["item_id"].astype(str))
                .pivot_table(index="model", columns="item", values="fraction")
                .reindex(index=models, columns=order))
        answers = (part.assign(item=part["item_id"].astype(str))
                   .pivot_table(index="model", columns="item", values="answers")
                   .reindex(index=models, columns=order).fillna(0))
        b_values = items.set_index(items["item_id"].astype(str))["b"].reindex(order)
        hover_b = [[b_values.iloc[j] for j in range(len(order))] for _ in models]
        figure.add_trace(go.Heatmap(
            z=grid.to_numpy(), x=order, y=models, zmin=0, zmax=1, colorscale=CORRECT_SCALE,
            showscale=col == 1, colorbar={"title": "fraction<br>correct", "len": 0.8},
            hoverinfo="skip", xgap=1, ygap=1, name=language,
        ), row=1, col=col)
        # Invisible markers on the cells carry the hover text and make cells clickable
        # (Plotly reports clicks on points, not on heatmap cells).
        cell_x = [item for _ in models for item in order]
        cell_y = [model for model in models for _ in order]
        figure.add_trace(go.Scatter(
            x=cell_x, y=cell_y, mode="markers", showlegend=False, name=language,
            marker={"symbol": "square", "size": 9, "color": "rgba(0,0,0,0)"},
            customdata=[(answers.iat[i, j], hover_b[i][j], grid.iat[i, j])
                        for i in range(len(models)) for j in range(len(order))],
            hovertemplate=("<b>%{y}</b> · item %{x}<br>b = %{customdata[1]:.2f}<br>correct in "
                           "%{customdata[2]:.0%} of %{customdata[0]} answers<extra></extra>"),
        ), row=1, col=col)
        figure.update_xaxes(title_text="items, easiest (lowest b) → hardest", type="category",
                            showticklabels=False, row=1, col=col)
    figure.update_layout(title=area_title(area), height=140 + 38 * len(models),
                         margin={"t": 70, "b": 40, "l": 10, "r": 10})
    event = show_figure(
        figure, key=f"patterns.{area}", file_stem=f"response_patterns_{filters.year}_{area}",
        image_format=filters.image_format, on_select=True,
        data=cells.drop(columns=["a"]),
        caption=(f"Rows: models; columns: the {len(order)} items they answered in {area}, sorted "
                 f"by IRT difficulty b (abandoned items last); cell darkness = share of shuffles "
                 f"answered correctly ({filters.shots}-shot). Click a cell to open its item."
                 + filters.provenance),
    )
    points = (event.selection.points if event is not None and hasattr(event, "selection")
              else [])
    if points:
        clicked = (area, int(points[0]["x"]))

if not answered:
    st.stop()

st.subheader("Open an item in the item explorer")
left, right = st.columns([3, 1])
descriptions: dict[tuple[str, int], str] = {}
for area in filters.areas:
    frame = queries.area_items(filters.year, area).sort_values("b", na_position="last")
    for row in frame.itertuples():
        descriptions[(area, int(row.item_id))] = f"{area} · item {row.item_id} · b = {row.b:.2f}"
options = list(descriptions)
choice = left.selectbox("Item (sorted by b within each area)", options,
                        format_func=descriptions.get, key="patterns.item")
if right.button("Open in the item explorer", key="patterns.open", width="stretch"):
    clicked = choice
if clicked is not None:
    st.switch_page(ITEM_EXPLORER.file, query_params={"item": str(clicked[1]), "area": clicked[0]})
