"""Runs: launch a model on an exam, watch it live, cancel it, and see the exact prompts.

Everything a run does goes through the runs service (``workflows.runs``), the same functions
the ``enem-llm run | runs | cancel | prompt`` commands call.
"""

from __future__ import annotations

import streamlit as st

from dashboard import queries
from dashboard.data import database_state
from dashboard.state import open_page
from enem.areas import AREAS
from inference.answer_methods import (
    ANSWER_METHODS,
    DEFAULT_ANSWER_METHOD,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_TEMPERATURE,
    method_options,
)
from inference.backends import available_backends
from inference.plan import RANDOM_BASELINE, RunSpec, model_or_default
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from workflows.runs import (
    SKIPPED_WORDING,
    RunNotRemovable,
    RunNotRunning,
    RunProgress,
    any_active,
    cancel,
    command_line,
    list_runs,
    prompt_text,
    remove_run,
    runs_directory,
    start_in_background,
)

#: Seconds between two refreshes of the run tables while a run is working (else no polling).
REFRESH_SECONDS = 2
#: Columns of the store's run table shown here (the Data page shows all of them).
STORED_COLUMNS = ["series", "run_id", "backend", "origin", "years", "areas", "languages",
                  "prompt_type", "repetition", "repetitions", "status", "finished_at", "patterns"]

filters = open_page("Model runs")
db_path = database_state().path
runs_dir = runs_directory(db_path)

st.caption("A run asks a model every item of one booklet per area, in each prompt language and "
           "shot setting, under N option shuffles, and scores every shuffle as a response pattern "
           "with the same code as the human candidates. Runs are background processes: they keep "
           "going while you browse, and a stopped run continues where it left off when launched "
           "again with the same settings.")

st.subheader("Launch a run")
with st.form("launch"):
    left, middle, right = st.columns(3)
    backend = left.selectbox("Backend", available_backends(), index=0,
                             help="transformers: a local model (CUDA when present, else CPU); "
                                  "openai: any OpenAI-compatible API; random: the baseline")
    model = left.text_input("Model", help="local path or hub id (transformers), API model name "
                                          f"(openai); empty means {RANDOM_BASELINE} for random")
    gguf_file = left.text_input("GGUF file inside the model folder (optional)")
    base_url = left.text_input("API base URL (openai backend)",
                               help="The key is read from OPENAI_API_KEY in the environment "
                                    "of the dashboard; it is never stored.")
    areas = middle.multiselect("Areas", AREAS, default=list(AREAS))
    languages = middle.multiselect("Prompt languages", PROMPT_LANGUAGES,
                                   default=[PROMPT_LANGUAGES[0]])
    shots = middle.multiselect("Shots", SHOT_SETTINGS, default=[SHOT_SETTINGS[0]])
    shuffles = right.number_input("Option shuffles per item", 1, 120, 30)
    seed = right.number_input("Seed", 0, 2**31 - 1, 0)
    family = right.text_input("Model family (for grouping)")
    method = right.selectbox(
        "Answer method", ANSWER_METHODS, index=ANSWER_METHODS.index(DEFAULT_ANSWER_METHOD),
        help="How the model's answer is read (transformers and openai; the random baseline "
             "has letters only). letter-prob: the letters' next-token probabilities; "
             "full-answer-prob: the mean log-probability of each option's text (openai: only "
             "servers that return prompt log-probabilities); generate: a sampled answer whose "
             "letter is parsed, unreadable answers counted and left out of the scores.")
    temperature = right.number_input("Temperature (generate)", 0.0, 2.0, DEFAULT_TEMPERATURE,
                                     step=0.1, help="Sampling temperature of generated answers "
                                                    "(0 = greedy); generate only.")
    max_new_tokens = right.number_input("Max new tokens (generate)", 1, 512,
                                        DEFAULT_MAX_NEW_TOKENS,
                                        help="Tokens generated per answer; generate only.")
    launched = st.form_submit_button("Launch", type="primary")

# The form's values as the run they describe; the random backend needs no model name.
spec = RunSpec(model=model_or_default(backend, model), backend=backend,
               year=filters.year, areas=tuple(areas), languages=tuple(languages),
               shots=tuple(shots), n_shuffles=int(shuffles), seed=int(seed),
               backend_options={**{key: value for key, value in (("gguf_file", gguf_file),
                                                                 ("base_url", base_url)) if value},
                                **method_options(backend, method, float(temperature),
                                                 int(max_new_tokens))},
               family=family or None)
st.code(command_line(spec, db_path), language="bash", wrap_lines=True)
st.caption("The same run from a terminal, runnable as shown (add --background to return at "
           "once, as the Launch button does); it has the same run id, so either one continues "
           "what the other started.")

if launched:
    if not areas or not languages or not shots:
        st.error("Choose at least one area, one prompt language and one shot setting.")
    elif not spec.model:
        st.error("Name the model to run.")
    else:
        try:
            started = start_in_background(spec, db_path, runs_dir)
        except (ValueError, OSError) as error:
            st.error(f"The run could not start: {error}")
        else:
            # Kept for the reruns that follow (the tables refresh themselves while it works).
            st.session_state["runs.started"] = (
                f"Run **{started.run_id}** started (process {started.pid}). Follow its progress "
                "under *Runs on this machine* below; you can leave this page, it keeps going. "
                "When it finishes it is published into the database, appears under *Runs in "
                "the database* and on every page (pick it in the sidebar's Runs). Its log is "
                f"`{started.folder / 'log.txt'}`.")
if st.session_state.get("runs.started"):
    st.success(st.session_state["runs.started"])


def draw_run(run: RunProgress) -> None:
    """One run folder: state, rate, progress, and its Cancel or Remove button."""
    header = st.columns([4, 2, 2, 1])
    header[0].markdown(f"**{run.run_id}** — {run.state}")
    header[1].markdown(f"{run.items_per_s:.2f} items/s" if run.items_per_s else "—")
    header[2].markdown(f"ETA {run.eta_s / 60:.1f} min" if run.eta_s else "")
    if run.alive and header[3].button("Cancel", key=f"cancel-{run.run_id}"):
        try:
            st.toast(cancel(run.run_id, runs_dir))
        except RunNotRunning as error:
            st.toast(str(error))
    if run.removable and header[3].button("Remove", key=f"remove-{run.run_id}",
                                          help="Delete this run's folder (its finished "
                                               "batches) and any unpublished rows"):
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
        st.error(run.error)
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
    st.dataframe(stored[STORED_COLUMNS], hide_index=True, width="stretch")
    st.caption("Finished runs and imported results. Pages name each by its series; every "
               "repetition (an option shuffle, or a sampling seed with the options in order) "
               "of every prompt variant is one scored pattern.")


# Refreshing only while some run is working: the interval is chosen on each full run.
st.session_state.setdefault("runs.active", any_active(list_runs(runs_dir)))
st.fragment(run_every=REFRESH_SECONDS if st.session_state["runs.active"] else None)(run_tables)()

st.subheader("See the exact prompt")
columns = st.columns(6)
area = columns[0].selectbox("Area", AREAS, key="runs.prompt_area")
position = columns[1].number_input("Position", 1, 45, 1, key="runs.prompt_position")
language = columns[2].selectbox("Language", PROMPT_LANGUAGES, key="runs.prompt_language")
prompt_shots = columns[3].selectbox("Shots", SHOT_SETTINGS, key="runs.prompt_shots")
shuffle = columns[4].number_input("Shuffle", 0, 119, 0, key="runs.prompt_shuffle")
prompt_seed = columns[5].number_input("Seed", 0, 2**31 - 1, 0, key="runs.prompt_seed")
try:
    text = prompt_text(db_path, year=filters.year, area=area, position=int(position),
                       language=language, shots=prompt_shots, shuffle=int(shuffle),
                       n_shuffles=max(30, int(shuffle) + 1), seed=int(prompt_seed))
except ValueError as error:
    st.info(str(error))
else:
    st.code(text, language=None)
    st.caption("Exactly what the model reads; it is scored on the next token after the final "
               "'(' (one of A–E). Same as `enem-llm prompt` with these settings.")
