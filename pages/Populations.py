"""Populations (PATCH): a model's proficiency against many groups of candidates, not one
"human average".

Every population of the chosen grouping (states, school types, family background …) is a box
from its 25th to 75th percentile with the mean as its middle line, whiskers at the 5th and 95th
percentiles and the 95% CI of its mean; each model is its pooled θ̄ over prompt variants with
its 95% CI, placed among the populations in rank order, by percent correct and by IRT. Human
numbers come pre-aggregated from the ingest (``store.populations``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.figures import series_styles, show_figure
from dashboard.populations import queries as pq
from dashboard.populations.figure import box_figure, forest_figure
from dashboard.populations.labels import GROUPING_TITLES, population_phrase
from dashboard.populations.models import (
    DEFAULT_DIMENSIONS,
    ESTIMATORS,
    VARIANT_DIMENSIONS,
    ml_rescored,
    model_summaries,
    variant_estimates,
)
from dashboard.populations.tables import (
    SCALES,
    model_entries,
    ordinal,
    percentile_table,
    population_summary,
    ranking,
    welch_table,
)
from dashboard.populations.view import (
    download,
    measurement_error_section,
    rank_styler,
    table_config,
)
from dashboard.state.frame import no_runs_message, open_page
from dashboard.state.url import seed_page_choice, write_page_choice

#: The page's own query parameter: the Area picked here, so that a shared link reopens it (the
#: sidebar's ``area`` is the set of areas; ``dashboard.state.url`` keeps that one).
AREA_PARAM = "pop_area"

filters = open_page("Populations: a model against many groups of candidates")

seed_page_choice(AREA_PARAM, filters.areas, "populations.area")
top = st.columns(4)
area = top[0].selectbox("Area", list(filters.areas), key="populations.area")
write_page_choice(AREA_PARAM, "populations.area")
kinds = pq.population_kinds(filters.year, area)
offered = [k for k in GROUPING_TITLES if k in set(kinds["group_kind"])] or ["state"]
kind = top[1].selectbox("Populations", offered, format_func=GROUPING_TITLES.__getitem__,
                        key="populations.kind")
scale = top[2].radio("Scale", SCALES, key="populations.scale")
estimator = top[3].radio("Model θ", list(ESTIMATORS), format_func=ESTIMATORS.get,
                         key="populations.estimator")
left, mid, right = st.columns([2, 2, 1])
dimensions = tuple(left.multiselect(
    "A prompt variant is one", list(VARIANT_DIMENSIONS), default=list(DEFAULT_DIMENSIONS),
    key="populations.dimensions",
    help="Patterns sharing these form one variant (their mean θ, with the SE of one test: they "
         "answered the same items); the variants are then pooled into the model's θ̄ by random "
         "effects. Welch's tests use the variants as the sample."))
every_prompt = mid.toggle("Pool all prompt settings", value=False,
                          key="populations.every_prompt",
                          help="Off: only the sidebar's "
                               f"{filters.prompt_label} (languages and shot settings change θ; "
                               "the Conditions page compares them). On: every prompt language "
                               "and number of shots of the runs is pooled into the models' θ̄.")
smallest = right.number_input("Smallest population", 1, 100_000, 30, step=10,
                              key="populations.smallest")

rows = pq.population_rows(filters.year, area, kind, "reproduced" if filters.excluded else "all")
rows = rows[(rows["n"] >= smallest) | (rows["group_kind"] == "all")].reset_index(drop=True)
if not filters.has_humans:
    st.info(f"{filters.year} was stored from its item file alone: no candidates, so no human "
            "populations; the models are shown alone.")
elif not filters.include_blank:
    st.caption("The populations include all-blank tests (θ of an all-wrong pattern, nota 0): "
               "the sidebar switch that leaves them out applies to the histograms only.")
if filters.has_humans and rows.empty and filters.excluded:
    st.info(f"No candidate of {area} is left once the booklets whose notas are not reproduced "
            "are left out (the sidebar switch).")
elif filters.has_humans and rows.empty:
    st.info(f"No human populations are stored for {filters.year} {area}: the year was ingested "
            "before they existed. Ingest it again (`enem-llm ingest-enem …`) to build them.")

patterns = pq.model_patterns(filters.year, area, filters.booklet_for(area),
                             None if every_prompt else filters.language,
                             None if every_prompt else filters.shots, filters.models,
                             filters.pooled)
if estimator == "ML" and len(patterns):
    patterns = ml_rescored(patterns, filters.year)
    bound = patterns.groupby("model")["at_bound"].sum()
    if bound.any():
        st.caption("ML has no finite estimate for a pattern all right or all wrong; left out: "
                   + ", ".join(f"{m} {int(k)}" for m, k in bound.items() if k) + ".")
variants = variant_estimates(patterns, dimensions)
summaries = model_summaries(variants)
if summaries.empty:
    st.info(no_runs_message(filters, area, None if every_prompt else filters.language))

people = population_summary(rows, scale, area)
models = model_entries(summaries, scale, area)
entries = pd.concat([people, models], ignore_index=True)
styles = series_styles(summaries["model"], filters.series_order)
irt_title = scale
if len(entries):
    show_figure(
        box_figure(entries, irt_title, styles), key="populations.box",
        file_stem=f"populations_{filters.year}_{area}_{kind}", image_format=filters.image_format,
        data=entries,
        caption=(f"{area}, {filters.year}: each population of {GROUPING_TITLES[kind].lower()} "
                 f"with at least {smallest} candidates — box 25th–75th percentile, black line the "
                 "mean with the 95% CI of the mean (often narrower than the line), whiskers 5th "
                 "and 95th percentiles; left percent correct (100·CTT/items counted), right "
                 f"{irt_title}"
                 + (" (humans: official notas; models: k·θ + d)" if scale == SCALES[1] else "")
                 + f". Each model: its θ̄ pooled over its variants by random effects "
                 f"({estimator}; the CI widens when variants disagree), 95% CI; percent "
                 "correct: the mean over variants ± "
                 "1.96·SD/√n. Both panels are sorted best first." + filters.provenance))

st.subheader("Ranks by percent correct and by IRT")
if len(entries):
    ranks = ranking(entries)
    st.dataframe(rank_styler(ranks), hide_index=True, width="stretch",
                 column_config=table_config(), placeholder="—")
    st.caption("Rank 1 is the best; highlighted rows change rank between percent correct and "
               "IRT (change = rank by percent correct − rank by IRT; positive climbs under IRT).")
    download(ranks, f"population_ranks_{filters.year}_{area}_{kind}", "populations.ranks")

if len(rows):
    measurement_error_section(rows, scale, area, f"populations_{filters.year}_{area}_{kind}")

if len(summaries):
    st.subheader("Each model's θ over its prompt variants")
    show_figure(
        forest_figure(variants, summaries, scale, area, styles), key="populations.forest",
        file_stem=f"population_variants_{filters.year}_{area}", image_format=filters.image_format,
        data=variants,
        caption=(f"Each variant ({' × '.join(dimensions) or 'all patterns together'}): the "
                 f"mean θ ({estimator}) of its patterns ± 1.96·SE, the SE of one test "
                 "(√ of the patterns' mean SE², as they answered the same items); diamond: the "
                 "model's θ̄ pooled over variants by random effects (DerSimonian–Laird: "
                 "w = 1/(SE² + τ²), θ̄ = Σwθ/Σw, SE = 1/√Σw, τ² the variants' disagreement "
                 "beyond their SEs, 0 when they agree), 95% CI θ̄ ± 1.96·SE, on the scale "
                 + scale + "." + filters.provenance))

if len(summaries) and len(rows):
    st.subheader("A model against every population")
    chosen = st.selectbox("Model", summaries["model"].tolist(), key="populations.model")
    model = summaries.set_index("model").loc[chosen]
    welch = welch_table(model, people, scale, area)
    st.dataframe(welch, hide_index=True, width="stretch", column_config=table_config(),
                 placeholder="—")
    st.caption(f"Welch's t-test of {chosen} ({int(model['variants'])} variants: their mean, SD "
               "and n) against each population (its mean, SD and n), by percent correct and "
               "by IRT; CI overlap: whether the model's 95% CI and the population mean's 95% "
               "CI share a point." + ("" if model["variants"] > 1 else " One variant has no "
                                      "spread: pick more variant dimensions to test."))
    download(welch, f"population_welch_{filters.year}_{area}_{kind}", "populations.welch")

    st.subheader("Where the model falls inside each population")
    places = percentile_table(model, rows)
    best = places.sort_values("theta_percentile", ascending=False).iloc[0]
    st.markdown(f"**{chosen}** ({estimator} θ̄ {model['theta']:.2f}) is at the "
                f"**{ordinal(best['theta_percentile'])} percentile** of "
                f"{population_phrase(best['kind'], best['value'])} in {area}, its highest place.")
    st.dataframe(places, hide_index=True, width="stretch", column_config=table_config(),
                 placeholder="—")
    st.caption("Percent of each population's candidates below the model's θ̄ and below its "
               "mean percent correct (ties count half), read from the stored quantiles at "
               "every 1%, linear in between.")
    download(places, f"population_percentiles_{filters.year}_{area}_{kind}",
             "populations.percentiles")
