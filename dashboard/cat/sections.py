"""The Adaptive testing page's sections (one tab each): the simulation study on an item bank,
the live CAT paths of models (and their launch form), the diagnostic report by skill, and the
post-hoc CAT of real candidates. Each takes the sidebar's filters and the page's area; the
CAT settings, simulees and seed are the sidebar's (``dashboard.cat.figures.sidebar_settings``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from analytics.cat.settings import CatSettings
from dashboard.cat import figures as cat
from dashboard.cat import launch_form as launch
from dashboard.cat import skills, tables
from dashboard.state.filters import Filters
from dashboard.state.frame import no_runs_message


def show_simulation(filters: Filters, area: str, years: list[int], paths: pd.DataFrame,
                    settings: CatSettings, simulees: int, seed: int) -> None:
    """The simulation study on the bank of ``years``: MSE by test length (CAT against random
    fixed forms), the variable-length CAT, and the SE curves of noisy simulees beside the
    live runs' (``paths``)."""
    st.subheader("Simulation: CAT against random fixed forms")
    bank = None
    if not years:
        st.info("Choose at least one year for the item bank.")
    else:
        try:
            bank = cat.area_bank(area, tuple(sorted(years)), cat.version_token())
        except ValueError as error:
            st.info(f"{error}: nothing to simulate.")
    if bank is not None:
        key = cat.cache_key(tuple(sorted(years)), area)
        table, lines = cat.simulation(bank, key, settings, simulees, seed)
        st.write(lines[1])
        cat.show(cat.mse_figure(table, area), "cat.mse",
                 f"Mean squared error E[(θ̂ − θ₀)²] over {simulees} simulees (θ₀ ~ N(0, 1)) after "
                 f"each item: CAT ({settings.describe()}) against random fixed forms of the same "
                 "length (the first t items of a random order), same simulees and estimator. MSE "
                 "is in logits² (θ's unit squared); its square root is the typical distance of θ̂ "
                 f"from the true θ. {lines[0]}; `enem-llm cat-simulate --area {area} --years "
                 f"{' '.join(map(str, sorted(years)))}` prints the same table.", table,
                 filters.image_format)

        st.subheader("Variable length: stop at an SE target")
        variable = cat.variable_table(bank, key, settings, simulees, seed)
        cat.show(cat.variable_figure(variable, table, area, settings.max_items), "cat.variable",
                 "Each diamond: the same simulees take a CAT that stops once SE(θ̂) falls below "
                 f"the target, or at {settings.max_items} items; x is the mean number of items "
                 "they used, y the MSE of their final θ̂. The lines are the fixed-length CAT and "
                 "random forms from the figure above: a diamond under the CAT line measures as "
                 "well with fewer items on average. SE is the posterior SD for EAP (1/√information "
                 "for ML and MAP), in logits. `enem-llm cat-simulate … --se-target SE` prints one "
                 "target's row.", cat.variable_frame(variable), filters.image_format)
        tables.show_table(cat.variable_frame(variable), "cat.variable_table",
                          "Per SE target: mean and median items used, the share of simulees whose "
                          f"SE reached the target (the rest stopped at {settings.max_items} "
                          "items), and the MSE of the final θ̂.")

        st.subheader("Guess and slip: SE curves of noisy simulees, with the models")
        noise = cat.noise_table(bank, key, settings, simulees, seed)
        models = cat.model_se_curves(paths) if not paths.empty else {}
        figure, nearest, clipped = cat.noise_figure(noise, models)
        cat.show(figure, "cat.noise",
                 "Grey: the median SE(θ̂) over the simulees after each item, for simulees whose "
                 "right answers are scored wrong with probability slip and wrong answers right "
                 "with probability guess, guess and slip in "
                 f"{', '.join(f'{v:g}' for v in cat.NOISE_VALUES)}; coloured: each live CAT run's "
                 "median SE over its paths. The median, not the mean: one θ̂ at an ML bound has an "
                 "SE in the thousands and would carry a mean with it. SE is in logits, θ's unit "
                 "(INEP's items put their calibration population at mean 0, SD 1): an SE of 0.3 "
                 "means θ̂ is typically within ±0.3 of the θ it estimates. With EAP it is the "
                 "posterior SD and cannot exceed the prior's 1."
                 + (f" The axis ends at {cat.NOISE_SE_CAP:g} logits; values above it are off the "
                    "chart." if clipped else ""), noise, filters.image_format)
        if nearest:
            st.write("; ".join(f"**{label}** is nearest guess {g:g}, slip {s:g}"
                               for label, (g, s) in nearest))
        else:
            st.info("No live CAT run for this year and area: run `enem-llm cat-run` to overlay "
                    "a model.")


def show_live(filters: Filters, area: str, paths: pd.DataFrame, settings: CatSettings) -> None:
    """The live CAT paths of models against their full exams, their item overlap, and the
    form that launches one."""
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
            "end of the path (empty: it did not, or the model has no full exam).", pinned=("run",))
        overlap = cat.jaccard_frame(paths)
        cat.show(cat.jaccard_figure(overlap, area), "cat.jaccard",
                 "Jaccard overlap |A ∩ B| / |A ∪ B| of the item sets administered on each run and "
                 "path (1: the same items; the paper reports about 0.6 between models).",
                 overlap.reset_index(names="run"), filters.image_format)

    st.subheader("Launch a live CAT")
    launch.launch_form(filters, settings, area)
    launch.launched_progress()


def show_skills(filters: Filters, area: str, seed: int) -> None:
    """The models' diagnostic report by skill or competência beside the humans' levels, and
    their accuracy against the 3PL expectation by skill."""
    st.subheader("Diagnostic report by skill")
    grouping = st.radio("Skills", list(skills.GROUPING_TITLES), horizontal=True, key="cat.grouping",
                        format_func=skills.GROUPING_TITLES.get,
                        help="ENEM's Matriz de Referência groups the 30 skills (CO_HABILIDADE) of "
                             "an area into 6–9 competências; a booklet holds 1–3 items per skill, "
                             "3–8 per competência")
    levels = skills.level_report(filters, area, grouping, seed)
    if levels.models.empty:
        st.info(no_runs_message(filters, area))
    else:
        figure_caption, table_caption = skills.level_captions(levels, filters, grouping, seed)
        if levels.description is None:
            st.info(f"{filters.year} holds no candidates (item file only): the models are shown "
                    "without the human levels.")
        cat.show(skills.level_figure(levels, area, grouping, filters.series_order), "cat.levels",
                 figure_caption, skills.level_frame(levels), filters.image_format)
        st.markdown(skills.level_markdown(levels, area))
        st.markdown(f"**{area}:** {skills.level_rank(levels)}")
        st.caption(table_caption)

    with st.expander("Accuracy against the 3PL expectation by skill"):
        report = skills.skill_report(filters, area)
        if report.empty:
            st.info(no_runs_message(filters, area))
        else:
            baselines = skills.baseline_names(filters)
            order = skills.skill_order(report, baselines)
            cat.show(skills.skill_figure(report, area, order, filters.series_order, baselines),
                     "cat.skills",
                     "For each selected model's full-exam answers on the area's items, per skill "
                     "(CO_HABILIDADE): its accuracy (mean over the skill's items of its fraction "
                     "correct; filled), the 3PL expectation at its θ (mean over the items of P(θ), "
                     "θ the mean over its response patterns; open diamond) and the accuracy of "
                     "humans of that θ (mean over the items of the humans' fraction correct in the "
                     "item's θ bin of width 0.25 holding it; grey cross). Skills sorted from the "
                     "largest mean accuracy − expectation (strengths) to the smallest; "
                     f"{filters.prompt_label}." + filters.provenance, report, filters.image_format)
            tables.show_table(skills.skill_table(report, baselines), "cat.skills_table",
                              "The report by model and skill: items, the model's θ, its accuracy, "
                              "the 3PL expectation, the humans of its θ bin and how many they are.")


def show_posthoc(filters: Filters, area: str, seed: int) -> None:
    """The post-hoc CAT of a sample of the year's real candidates, on request."""
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
            frame, summary = cat.posthoc(cat.cache_key((filters.year,), area), filters.year, area,
                                         int(n), seed)
            st.write(summary[1])
            cat.show(cat.posthoc_figure(frame, area), "cat.posthoc",
                     "Each sampled candidate's recorded answers replayed as a maximum-information "
                     "CAT on their own booklet, θ̂ by the year's scoring recipe: the number of "
                     "items from which θ̂ stays within the candidate's full-test θ ± "
                     "SE. " + summary[0]
                     + ".", frame, filters.image_format)
