"""Adaptive testing (CAT): how few items give θ, for simulees, real candidates and live models.

The simulation study (MSE of θ̂ by test length, CAT against random fixed forms), SE curves of
careless or lucky simulees (guess/slip) with the models' live curves, the live CAT paths
against the same models' full exams, the overlap of the items given to each model, the
models' diagnostic report by skill, and the post-hoc CAT of real candidates.
"""

from __future__ import annotations

import streamlit as st

from dashboard import cat_figures as cat
from dashboard import cat_launch as launch
from dashboard import cat_skills as skills
from dashboard import cat_tables as tables
from dashboard.cat_queries import area_bank_items, cat_paths
from dashboard.state import open_page

filters = open_page("Adaptive testing (CAT)")
settings, simulees, seed = cat.sidebar_settings()
area = st.selectbox("Area", filters.areas, key="cat.area",
                    help="the item bank: the year's distinct items of this area")
items = area_bank_items(area, [filters.year])
paths = cat.with_series(cat_paths(filters.year, area))
key = cat.cache_key(filters.year, area)

st.subheader("Simulation: CAT against random fixed forms")
if items.empty:
    st.info(f"No {area} items with parameters in {filters.year}: nothing to simulate.")
else:
    bank = cat.area_bank(filters.year, area, items)
    table, lines = cat.simulation(bank, key, settings, simulees, seed)
    st.write(" ".join(lines[1:]))
    cat.show(cat.mse_figure(table, area), "cat.mse",
             f"Mean squared error E[(θ̂ − θ₀)²] over {simulees} simulees (θ₀ ~ N(0, 1)) after "
             f"each item: CAT ({settings.describe()}) against random fixed forms of the same "
             f"length, same estimator; bank: {bank.describe()}. {lines[0]}.", table,
             filters.image_format)

    st.subheader("Guess and slip: SE curves of noisy simulees, with the models")
    noise = cat.noise_table(bank, key, settings, simulees, seed)
    models = cat.model_se_curves(paths) if not paths.empty else {}
    figure, nearest = cat.noise_figure(noise, models)
    cat.show(figure, "cat.noise",
             "Grey: mean SE(θ̂) by step of simulees whose right answers are scored wrong with "
             "probability slip and wrong answers right with probability guess, for guess and "
             f"slip in {', '.join(f'{v:g}' for v in cat.NOISE_VALUES)}; coloured: each live "
             "CAT run's mean SE over its paths. Log scale: in the first steps an all-right or "
             "all-wrong pattern leaves a maximum-likelihood θ̂ at its bound, where the SE runs "
             "into the thousands.", noise, filters.image_format)
    if nearest:
        st.write("; ".join(f"**{label}** is nearest guess {g:g}, slip {s:g}"
                           for label, (g, s) in nearest))
    else:
        st.info("No live CAT run for this year and area: run `enem-llm cat-run` to overlay "
                "a model.")

st.subheader("Live CAT paths")
if paths.empty:
    st.info(f"No live CAT of a model on {area} {filters.year} yet. Launch one below, or "
            f"with `enem-llm cat-run --year {filters.year} --areas {area} --backend …`.")
else:
    cat.show(cat.paths_figure(paths), "cat.paths",
             "θ̂ after each item with ± 1 SE bars, one line per run and path (a path shows "
             "every item in one option order). The stopping rule of each run is in its "
             "settings column.", paths, filters.image_format)
    tables.show_table(
        tables.full_exam_comparison(filters.year, paths), "cat.full_exam",
        "Each live CAT path against the same model's full exam in the same prompt language "
        "and shots (every full run of the model pooled): the CAT's final θ̂ ± SE, the full "
        "exam's θ and SE (means over its response patterns, by the year's scoring recipe), "
        "and the number of CAT items from which θ̂ stayed within the full-exam θ ± SE to the "
        "end of the path (empty: it did not, or the model has no full exam).")
    overlap = cat.jaccard_frame(paths)
    cat.show(cat.jaccard_figure(overlap, area), "cat.jaccard",
             "Jaccard overlap |A ∩ B| / |A ∪ B| of the item sets administered on each run and "
             "path (1: the same items; the paper reports about 0.6 between models).",
             overlap.reset_index(names="run"), filters.image_format)

st.subheader("Launch a live CAT")
launch.launch_form(filters, settings, area)
launch.launched_progress()

st.subheader("Diagnostic report by skill")
report = skills.skill_report(filters, area)
if report.empty:
    st.info(filters.no_runs_message(area))
else:
    order = skills.skill_order(report)
    cat.show(skills.skill_figure(report, area, order, filters.series_order), "cat.skills",
             "For each selected model's full-exam answers on the area's items, per skill "
             "(CO_HABILIDADE): its accuracy (mean over the skill's items of its fraction "
             "correct; filled), the 3PL expectation at its θ (mean over the items of P(θ), θ "
             "the mean over its response patterns; open diamond) and the accuracy of humans of "
             "that θ (mean over the items of the humans' fraction correct in the item's θ bin "
             "of width 0.25 holding it; grey cross). Skills sorted from the largest mean "
             f"accuracy − expectation (strengths) to the smallest; {filters.prompt_label}."
             + filters.provenance, report, filters.image_format)
    tables.show_table(skills.skill_table(report), "cat.skills_table",
                      "The report by model and skill: items, the model's θ, its accuracy, the "
                      "3PL expectation, the humans of its θ bin and how many they are.")

st.subheader("Post-hoc CAT on real candidates")
if not filters.has_humans:
    st.info(f"{filters.year} holds no candidates (items only): nothing to replay.")
else:
    left, right = st.columns([1, 2], vertical_alignment="bottom")
    n = left.number_input("Candidates to replay", 100, 20_000, 1000, step=100, key="cat.n")
    replay = right.toggle("Replay them", key="cat.replay",
                          help="samples the candidates and runs one CAT per candidate on "
                               "their recorded answers (about a second on a full-size year)")
    if not replay:
        st.caption("Switch on to replay a fixed pseudo-random sample of the year's "
                   f"{area} candidates (the sidebar's seed) as adaptive tests.")
    else:
        frame, summary = cat.posthoc(key, filters.year, area, int(n), seed)
        st.write(summary[1])
        cat.show(cat.posthoc_figure(frame, area), "cat.posthoc",
                 "Each sampled candidate's recorded answers replayed as a maximum-information "
                 "CAT on their own booklet, θ̂ by the year's scoring recipe: the number of items "
                 "from which θ̂ stays within the candidate's full-test θ ± SE. " + summary[0]
                 + ".", frame, filters.image_format)
