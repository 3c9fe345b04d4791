"""Item explorer: one item in full — its text, parameters, curve, who picks which option.

The item comes from the URL (``?item=CO_ITEM&area=CN``, which the Response patterns page uses
to open an item) or from the pickers below.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from dashboard import access, queries
from dashboard.figures import THETA_TITLE, series_styles, show_figure
from dashboard.options.figures import share_axis_range
from dashboard.palette import HUMAN_COLOUR, OKABE_ITO, with_alpha
from dashboard.state.frame import note_missing_runs, open_page
from dashboard.state.selection import information_booklet
from dashboard.summaries import THETA_GRID, item_curves, model_item_di
from enem.areas import (
    AREA_NAMES,
    AREAS,
    BLANK_MARK,
    LANGUAGE_NAMES,
    MULTIPLE_MARK,
    OPTION_LETTERS,
)
from enem.item_statistics import ICC_BIN_WIDTH
from inference.protocol import PROMPT_LANGUAGE_NAMES, PROMPT_LANGUAGES

#: What humans can mark (the options, blank, several marks), in the order the bars are drawn.
HUMAN_MARKS = [*OPTION_LETTERS, BLANK_MARK, MULTIPLE_MARK]
#: A model's choice is "?" when it gave no usable answer.
NO_ANSWER = "?"
#: An item number in the URL: ASCII digits only (``str.isdigit`` also takes "²", which int()
#: refuses), at most 12 of them (CO_ITEM has 5–6).
URL_ITEM = re.compile(r"[0-9]{1,12}")
OPTION_NAMES = {**{letter: letter for letter in OPTION_LETTERS}, BLANK_MARK: "blank",
                MULTIPLE_MARK: "multiple", NO_ANSWER: "no answer"}

#: One item's rows in every booklet, with INEP's reason when it was abandoned.

filters = open_page("Item explorer")


def area_holding(year: int, item_id: int, first: str | None) -> str | None:
    """The area of ``year`` whose items include ``item_id`` (``first`` is looked at first)."""
    for candidate in sorted(AREAS, key=lambda a: a != first):
        if item_id in set(queries.area_items(year, candidate)["item_id"]):
            return candidate
    return None


def answered_note(row, answered: set[int], has_humans: bool) -> str:
    """What the item picker adds to an item's label when nobody, or only one side, of the
    selection answered it (``row`` is a row of ``area_items``, ``answered`` the items the
    selected runs answered)."""
    runs = int(row.item_id) in answered
    humans = pd.notna(row.n) and row.n > 0
    if not runs and not humans:
        return " · nobody answered it"
    if answered and not runs:
        return " · no runs"
    if has_humans and not humans:
        return " · no candidates"
    return ""


def opening_item(items: pd.DataFrame, booklet: int | None, answered: set[int]) -> int:
    """The item the page opens on: the first item of ``booklet`` (booklet order) that the
    selected runs or the candidates answered, else the area's first such item, else its
    first item."""
    taken = set(items.loc[items["n"].fillna(0) > 0, "item_id"].astype(int)) | answered
    listed = [int(item) for item in items["item_id"]]
    in_booklet = ([] if booklet is None else
                  [int(item) for item in queries.form_items(filters.year, booklet, None)["item_id"]
                   if int(item) in listed])
    for candidates in (in_booklet, listed):
        for item in candidates:
            if item in taken:
                return item
    return in_booklet[0] if in_booklet else listed[0]


def unanswered_message(item_id: int, area: str) -> str:
    """The empty state of an item the selected runs did not answer while they did answer
    other items of its area: which booklets hold it and which one the runs answered."""
    holders = sorted(int(b) for b in queries.item_record(filters.year, item_id)["booklet_id"])
    took = queries.model_booklet(filters.year, area, filters.language, filters.shots,
                                 filters.models)
    held = (f"booklet {holders[0]}" if len(holders) == 1 else
            "booklets " + ", ".join(str(b) for b in holders))
    where = (f"booklet {took}, which holds it, but stored no answer to it" if took in holders
             else f"booklet {took}, which does not hold it")
    return (f"No selected model run answered item {item_id} ({held}): the runs of "
            f"{filters.year} {area} ({filters.prompt_label}) answered {where}. Items marked "
            "“no runs” or “nobody answered it” in the picker have no model answers; the others "
            "do.")


# The URL wins when it names an item other than the one this page last wrote there; an area
# without an item (a link such as ?area=LC, or the sidebar's area) opens that area's first item.
url_item = st.query_params.get("item")
url_area = next((a for a in st.query_params.get_all("area") if a in AREAS), None)
not_in_year: int | None = None
if url_item and url_item != st.session_state.get("explorer.written"):
    if url_area:
        st.session_state["explorer.area"] = url_area
    if URL_ITEM.fullmatch(url_item):
        asked = int(url_item)
        holder = area_holding(filters.year, asked, url_area)
        if holder is None:
            not_in_year = asked
            st.session_state.pop("explorer.item", None)
        else:
            st.session_state["explorer.area"] = holder
            st.session_state["explorer.wanted"] = asked
    else:
        st.warning("The item in this page's link is not an item number (a CO_ITEM such as "
                   "123456); pick an item below.")
elif not url_item and url_area:
    st.session_state["explorer.area"] = url_area
    st.session_state.pop("explorer.item", None)

left, right = st.columns([1, 3])
area = left.selectbox("Area", list(AREAS), key="explorer.area",
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
        st.warning(f"The link asks for item {not_in_year}, but item {not_in_year} is not in "
                   f"{filters.year} (no booklet of that year holds it); nothing to show.")
    st.info(f"No items of {area} in {filters.year}: ingest that year's ITENS_PROVA file.")
    st.stop()
labels = {}
for row in items.itertuples():
    language = ("" if pd.isna(row.item_language)
                else f" ({LANGUAGE_NAMES[int(row.item_language)]})")
    b = "abandoned" if row.abandoned else f"b = {row.b:.2f}"
    labels[int(row.item_id)] = (f"position {row.first_position} · item {row.item_id}{language} · "
                                f"{b}{answered_note(row, answered, filters.has_humans)}")
default = opening_item(items, opening_booklet, answered)
if not_in_year is not None:
    st.warning(f"The link asks for item {not_in_year}, but item {not_in_year} is not in "
               f"{filters.year} (no booklet of that year holds it); showing item {default} "
               "instead.")
wanted = st.session_state.pop("explorer.wanted", None)
if wanted in labels:
    st.session_state["explorer.item"] = wanted
elif st.session_state.get("explorer.item") not in labels:
    st.session_state["explorer.item"] = default
item_id = right.selectbox("Item (first position in any booklet)", list(labels),
                          format_func=labels.get, key="explorer.item")
st.query_params["item"] = str(item_id)
st.query_params["area"] = area
st.session_state["explorer.written"] = str(item_id)

item = items[items["item_id"] == item_id].iloc[0]
texts = queries.item_texts(filters.year, item_id)
prompt_order = {language: index for index, language in enumerate(PROMPT_LANGUAGES)}
texts = texts.assign(order=texts["language"].map(prompt_order).fillna(len(prompt_order)))
texts = texts.sort_values("order")
st.subheader(f"Item {item_id} — {AREA_NAMES[area]}")
facts = st.columns(6)
facts[0].metric("Key", item["key"] or "—")
facts[1].metric("a (discrimination)", "—" if pd.isna(item["a"]) else f"{item['a']:.3f}")
facts[2].metric("b (difficulty)", "—" if pd.isna(item["b"]) else f"{item['b']:.3f}")
facts[3].metric("c (guessing)", "—" if pd.isna(item["c"]) else f"{item['c']:.3f}")
facts[4].metric("Skill (CO_HABILIDADE)", "—" if pd.isna(item["skill"]) else int(item["skill"]))
facts[5].metric("Human p-value", "—" if pd.isna(item["p_value"]) else f"{item['p_value']:.3f}")
if item["abandoned"]:
    reasons = queries.item_record(filters.year, item_id)["abandon_reason"].dropna().str.strip()
    reason = next((r for r in reasons if r), None)
    st.warning("INEP abandoned this item: it has no IRT parameters (a, b, c), so it has no "
               "characteristic curve and no information, and it counts in nobody's θ. "
               + (f"INEP's reason: “{reason}”." if reason
                  else "INEP's item file gives no reason."))

if texts.empty:
    st.info("No question text stored for this item (real exams: import texts with the "
            "question-text importer; the demo ships its own).")
else:
    text_columns = st.columns(len(texts))
    for column, row in zip(text_columns, texts.itertuples()):
        with column:
            st.markdown(f"**{PROMPT_LANGUAGE_NAMES.get(row.language, row.language)}** "
                        f"· source: {row.source}")
            st.markdown(access.inert_markdown(row.stem))
            for letter in OPTION_LETTERS:
                option = access.inert_markdown(getattr(row, f"option_{letter.lower()}"))
                mark = " ✔ (key)" if letter == row.key else ""
                st.markdown(f"- **({letter})** {option}{mark}")

model_theta = queries.model_item_theta(filters.year, item_id, filters.language, filters.shots,
                                       *selection)
choices = queries.model_item_choices(filters.year, item_id, filters.language, filters.shots,
                                     *selection)
model_di, n_patterns = model_item_di(long)
if long.empty:
    note_missing_runs(filters, pd.DataFrame({"area": []}), (area,))
elif model_theta.empty:
    st.info(unanswered_message(item_id, area))

stats = st.columns(3)
stats[0].metric("Human DI (top − bottom 25% by θ)",
                "—" if pd.isna(item["di"]) else f"{item['di']:.3f}")
stats[1].metric("Model DI (patterns ranked by θ)",
                "—" if pd.isna(model_di.get(item_id, np.nan))
                else f"{model_di[item_id]:.3f}",
                help=f"{n_patterns} model response patterns in the selection")
stats[2].metric("Humans who saw it", "—" if pd.isna(item["n"]) else f"{int(item['n']):,}")

# Item characteristic curve and information.
curve = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                      subplot_titles=["Item characteristic curve", "Item information"])
empirical = queries.item_icc(filters.year, item_id)
export = []
if item["abandoned"]:
    # Said in both panels: top left of the curve's (clear of the humans' dots, which climb to
    # the right), across the middle of the information's.
    # An invisible trace keeps the information panel's axes (plotly draws none without one).
    curve.add_trace(go.Scatter(x=[-4, 4], y=[0, 0], mode="lines", showlegend=False,
                               hoverinfo="skip", line={"color": "rgba(0,0,0,0)"}), row=1, col=2)
    curve.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, row=1, col=2)
    for column, x, y, anchor in ((1, 0.02, 0.98, "left"), (2, 0.5, 0.5, "center")):
        axis = curve.get_subplot(1, column).xaxis.plotly_name.replace("axis", "")
        curve.add_annotation(text="abandoned by INEP: no IRT parameters, no curve",
                             showarrow=False, xref=f"{axis} domain", yref=f"y{axis[1:]} domain",
                             x=x, y=y, xanchor=anchor, font={"size": 12, "color": "#555555"})
else:
    p, info = item_curves(item["a"], item["b"], item["c"])
    curve.add_trace(go.Scatter(x=THETA_GRID, y=p, name="3PL P(θ)", line={
        "color": OKABE_ITO[0], "width": 2}, hovertemplate="θ %{x:.2f}: P = %{y:.3f}<extra></extra>"),
        row=1, col=1)
    curve.add_trace(go.Scatter(x=THETA_GRID, y=info, name="information I(θ)", line={
        "color": OKABE_ITO[5], "width": 2}, hovertemplate="θ %{x:.2f}: I = %{y:.3f}<extra></extra>"),
        row=1, col=2)
    export.append(pd.DataFrame({"kind": "model curve", "theta": THETA_GRID, "p": p,
                                "information": info}))
if len(empirical):
    share = empirical["n_correct"] / empirical["n"]
    centre = empirical["theta_bin"] + ICC_BIN_WIDTH / 2
    curve.add_trace(go.Scatter(
        x=centre, y=share, mode="markers", name="humans: proportion correct",
        marker={"color": with_alpha(HUMAN_COLOUR, 0.8),
                    "size": np.clip(np.sqrt(empirical["n"]) / 2, 4, 18)},
        customdata=empirical[["n", "n_correct"]].to_numpy(),
        hovertemplate=("θ bin from %{x:.2f}−0.125: %{y:.1%} correct<br>"
                       "%{customdata[1]:,} of %{customdata[0]:,} candidates<extra></extra>"),
    ), row=1, col=1)
    export.append(empirical.assign(kind="humans", theta=centre, p=share))
styles = series_styles(model_theta["model"], filters.series_order) if len(model_theta) else {}
for row in model_theta.itertuples():
    colour, symbol = styles[row.model]
    curve.add_trace(go.Scatter(
        x=[row.mean_theta], y=[row.fraction_correct], mode="markers", name=row.model,
        marker={"color": colour, "symbol": symbol, "size": 12, "line": {"color": "black", "width": 1}},
        # A series right every time (or never) sits on the axis's end: draw it whole.
        cliponaxis=False,
        hovertemplate=(f"<b>{row.model}</b><br>mean θ = %{{x:.3f}}<br>correct in "
                       f"%{{y:.0%}} of {row.patterns} patterns<extra></extra>"),
    ), row=1, col=1)
if len(model_theta):
    export.append(model_theta.assign(kind="model", theta=model_theta["mean_theta"],
                                     p=model_theta["fraction_correct"]))
curve.update_xaxes(title_text=THETA_TITLE, range=[-4, 4])
curve.update_yaxes(title_text="probability correct", range=[-0.04, 1.06],
                   tickvals=[0, 0.2, 0.4, 0.6, 0.8, 1], row=1, col=1)
curve.update_yaxes(title_text="Fisher information", row=1, col=2)
curve.update_layout(height=420, margin={"t": 60, "b": 50, "l": 60, "r": 20},
                    legend={"orientation": "h", "yanchor": "bottom", "y": 1.08, "x": 0})
show_figure(
    curve, key="explorer.curve", file_stem=f"item_{item_id}_curve",
    image_format=filters.image_format,
    data=pd.concat(export, ignore_index=True) if export else pd.DataFrame(),
    caption=("Left: the 3PL curve from INEP's a/b/c, "
             + ("grey dots = share of candidates in each 0.25-wide θ bin who got it right (dot "
                "size ~ candidates), " if len(empirical) else
                "no grey dots (no candidate's answer to this item is stored), ")
             + "coloured markers = each model's mean θ and share of its repetitions right "
             f"({filters.prompt_label}"
             + ("" if len(model_theta) else "; none: no selected run answered this item")
             + "). Right: how much the item tells about θ at each ability."
             + filters.provenance),
)

# Which option do they pick?
human_options = queries.item_option_counts(filters.year, item_id)
bars = go.Figure()
rows = []
if len(human_options):
    counts = human_options.set_index("option")["n"].reindex(HUMAN_MARKS, fill_value=0)
    share = counts / max(counts.sum(), 1)
    bars.add_trace(go.Bar(x=[OPTION_NAMES[o] for o in HUMAN_MARKS], y=share, name="humans",
                          marker_color=with_alpha(HUMAN_COLOUR, 0.7),
                          hovertemplate="humans: %{y:.1%} chose %{x}<extra></extra>"))
    rows.append(pd.DataFrame({"who": "humans", "option": HUMAN_MARKS, "n": counts.to_numpy(),
                              "share": share.to_numpy()}))
for model, group in (choices.groupby("model", sort=True) if len(choices) else []):
    counts = group.set_index("choice")["n"].reindex([*HUMAN_MARKS, NO_ANSWER], fill_value=0)
    share = counts / max(counts.sum(), 1)
    colour, _ = series_styles(choices["model"].unique(), filters.series_order)[model]
    bars.add_trace(go.Bar(x=[OPTION_NAMES[o] for o in counts.index], y=share, name=model,
                          marker_color=colour,
                          hovertemplate=f"{model}: %{{y:.1%}} chose %{{x}}<extra></extra>"))
    rows.append(pd.DataFrame({"who": model, "option": counts.index, "n": counts.to_numpy(),
                              "share": share.to_numpy()}))
tallest = max((float(np.max(frame["share"])) for frame in rows), default=0.0)
bars.update_layout(barmode="group", height=380, margin={"t": 40, "b": 50, "l": 60, "r": 20},
                   xaxis_title=f"option (key: {item['key']})",
                   yaxis_title="share of answers", yaxis_tickformat=".0%",
                   yaxis_range=share_axis_range(tallest),
                   legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
st.subheader("Which option is chosen")
show_figure(
    bars, key="explorer.options", file_stem=f"item_{item_id}_options",
    image_format=filters.image_format,
    data=pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(),
    caption=(("Share of humans (all candidates who saw the item) and of each model's "
              if len(human_options) else
              "No candidate's answers to this item are stored, so no human bars; share of each "
              "model's ")
             + ("repetitions " if len(choices) else
                "repetitions (none: no selected run answered this item) ")
             + f"choosing each option (original letters; key {item['key']}). A tall wrong bar "
             "shared by humans and a model means they fall for the same distractor."
             + filters.provenance),
)
