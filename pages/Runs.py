"""Runs: launch a model on an exam, watch it live, cancel it, and see the exact prompts.

Everything a run does goes through the runs service (``workflows.runs.service``), the same functions
the ``enem-llm run | runs | cancel | prompt`` commands call. Launching, cancelling and removing
are for the operator (``dashboard.access``); a viewer sees the runs and the prompts.
"""

from __future__ import annotations

import streamlit as st

from dashboard import access, queries
from dashboard.data import database_state
from dashboard.runs.launch_form import launch_panel
from dashboard.runs.variants import prompt_caption, variant_table
from dashboard.state.frame import open_page
from enem.areas import AREAS
from inference.prompt_variants import VARIANTS
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from workflows.runs.service import (
    SKIPPED_WORDING,
    RunNotRemovable,
    RunNotRunning,
    RunProgress,
    any_active,
    cancel,
    list_runs,
    prompt_text,
    remove_run,
    runs_directory,
)

#: Seconds between two refreshes of the run tables while a run is working (else no polling).
REFRESH_SECONDS = 2
#: Columns of the store's run table shown here (the Data page shows all of them).
STORED_COLUMNS = ["series", "run_id", "backend", "origin", "years", "areas", "languages",
                  "prompt_type", "repetition", "repetitions", "status", "finished_at", "patterns"]

filters = open_page("Model runs")
db_path = database_state().path
runs_dir = runs_directory(db_path)
config = access.operator_config()
role = access.session_access(config)

st.caption("A run asks a model every item of one booklet per area, in each prompt language and "
           "shot setting, under N option shuffles, and scores every shuffle as a response pattern "
           "with the same code as the human candidates. Runs are background processes: they keep "
           "going while you browse, and a stopped run continues where it left off when launched "
           "again with the same settings.")

st.subheader("Launch a run")
if role.may_operate and config is not None:
    launch_panel(filters, db_path, runs_dir, config)
else:
    access.viewer_note(role, "Launching, cancelling and removing runs")


def draw_run(run: RunProgress) -> None:
    """One run folder: state, rate, progress, and its Cancel or Remove button."""
    header = st.columns([4, 2, 2, 1])
    header[0].markdown(f"**{run.run_id}** — {run.state}")
    header[1].markdown(f"{run.items_per_s:.2f} items/s" if run.items_per_s else "—")
    header[2].markdown(f"ETA {run.eta_s / 60:.1f} min" if run.eta_s else "")
    operating = role.may_operate
    if operating and run.alive and header[3].button("Cancel", key=f"cancel-{run.run_id}"):
        try:
            st.toast(cancel(run.run_id, runs_dir))
        except RunNotRunning as error:
            st.toast(str(error))
    if operating and run.removable and header[3].button(
            "Remove", key=f"remove-{run.run_id}",
            help="Delete this run's folder (its finished batches) and any unpublished rows"):
        try:
            st.success(remove_run(run.run_id, db_path, runs_dir))
        except (RunNotRemovable, OSError) as error:
            st.error(f"Run {run.run_id} was not removed: {error}")
        else:
            return
    total = run.units_total
    st.progress(run.units_done / total if total else 0.0,
                text=f"{run.units_done}/{total} items")
    if run.error:
        st.error(run.error if operating else access.without_paths(run.error))
    if run.skipped:
        st.caption(f"{len(run.skipped)} {SKIPPED_WORDING}.")


def run_tables() -> None:
    """The run folders with live progress, then the runs in the database. While a run works
    this refreshes itself every few seconds, so a run that ends shows up in the database
    table; the whole page reruns once when the last run ends, which stops the refreshing."""
    runs = list_runs(runs_dir)
    active = any_active(runs)
    if st.session_state.get("runs.active", False) != active:
        st.session_state["runs.active"] = active
        st.rerun()
    st.subheader("Runs on this machine")
    if not runs:
        st.info("No runs launched from this machine yet: launch one above.")
    for run in runs:
        draw_run(run)
    st.subheader("Runs in the database")
    stored = queries.model_run_table()
    if stored.empty:
        st.info("No finished or imported runs yet.")
        return
    stored = stored.sort_values("finished_at", ascending=False, na_position="last")
    st.dataframe(stored[STORED_COLUMNS], hide_index=True, width="stretch", placeholder="—")
    st.caption("Finished runs and imported results. Pages name each by its series; every "
               "repetition (an option shuffle, or a sampling seed with the options in order) "
               "of every prompt variant is one scored pattern.")


# Refreshing only while some run is working: the interval is chosen on each full run.
st.session_state.setdefault("runs.active", any_active(list_runs(runs_dir)))
st.fragment(run_every=REFRESH_SECONDS if st.session_state["runs.active"] else None)(run_tables)()

st.subheader("See the exact prompt")
columns = st.columns(7)
area = columns[0].selectbox("Area", AREAS, key="runs.prompt_area")
position = columns[1].number_input("Position", 1, 45, 1, key="runs.prompt_position")
language = columns[2].selectbox("Language", PROMPT_LANGUAGES, key="runs.prompt_language")
prompt_shots = columns[3].selectbox("Shots", SHOT_SETTINGS, key="runs.prompt_shots")
shuffle = columns[4].number_input("Shuffle", 0, 119, 0, key="runs.prompt_shuffle")
prompt_seed = columns[5].number_input("Seed", 0, 2**31 - 1, 0, key="runs.prompt_seed")
prompt_variant = columns[6].selectbox("Prompt variant", list(VARIANTS), key="runs.prompt_variant",
                                      help="The instruction the prompt opens with (every "
                                           "variant's text is in the table below)")
try:
    text = prompt_text(db_path, year=filters.year, area=area, position=int(position),
                       language=language, shots=prompt_shots, shuffle=int(shuffle),
                       n_shuffles=max(30, int(shuffle) + 1), seed=int(prompt_seed),
                       prompt_variant=prompt_variant)
except ValueError as error:
    st.info(str(error))
else:
    st.code(text, language=None, wrap_lines=True)
    st.caption(prompt_caption(prompt_variant))
with st.expander("Prompt variants: the instruction each one opens with"):
    st.caption("A prompt variant changes only the instruction at the head of the prompt (chain "
               "of thought also ends each question with its cue to reason instead of the "
               "answer label); the solved examples, questions and options stay the same. A run "
               "made with a variant stores its text, and its label names it.")
    st.dataframe(variant_table(list(PROMPT_LANGUAGES)), hide_index=True, width="stretch",
                 row_height=110, key="runs.variant_table")
