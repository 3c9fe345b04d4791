"""Launch a live CAT from the Adaptive testing page, as the Runs page launches a run: a form,
the equivalent ``enem-llm cat-run`` command line, and the launched CAT's progress (refreshed
while it works; the page redraws when it ends, so its paths appear)."""

from __future__ import annotations

import dataclasses

import streamlit as st

from analytics.cat import CatSettings
from dashboard import access
from dashboard.data import database_state
from dashboard.runs.launch_form import local_model_choice
from dashboard.state.filters import Filters
from enem.areas import AREAS
from inference.backends import available_backends
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from workflows.cat.launch import cat_command_line, cat_state, start_cat_in_background
from workflows.cat.live import CatRunSpec
from workflows.runs.service import check_capacity, runs_directory

#: Seconds between two looks at a working CAT's status.
REFRESH_SECONDS = 2
LAUNCHED_KEY = "cat.launched"
ACTIVE_KEY = "cat.launch_active"


def launch_form(filters: Filters, settings: CatSettings, area: str) -> CatRunSpec | None:
    """The form (its values as a spec; None when they make no CAT, with the reason shown) and
    the command line of that spec; starts it when the button is pressed."""
    config = access.operator_config()
    role = access.session_access(config)
    if not role.may_operate or config is None:
        access.viewer_note(role, "Launching a live CAT")
        return None
    db_path = database_state().path
    runs_dir = runs_directory(db_path)
    # Outside the form: the model controls below depend on it at once.
    backend = st.selectbox("Backend", available_backends(), key="cat.launch.backend",
                           help="transformers: a local model the operator allows; openai: "
                                "the OpenAI API; random: the baseline")
    with st.form("cat.launch"):
        left, middle, right = st.columns(3)
        if backend == "transformers":
            chosen = local_model_choice(left, config, key="cat.launch.local_model", gguf=False)
            model = chosen.model if chosen else ""
        else:
            model = left.text_input("Model", key="cat.launch.model",
                                    help="API model name (openai); empty for the random "
                                         "baseline")
        name = left.text_input("Name shown in the dashboard (optional)", key="cat.launch.name")
        areas = middle.multiselect("Areas", AREAS, default=[area], key="cat.launch.areas")
        language = middle.selectbox("Prompt language", PROMPT_LANGUAGES,
                                    key="cat.launch.language")
        shots = middle.selectbox("Shots", SHOT_SETTINGS, key="cat.launch.shots")
        paths = right.number_input("Paths (option orders)", 1, 120, 1, key="cat.launch.paths",
                                   help="path p shows every item in its p-th option order")
        se_target = right.number_input("Stop when SE falls below (0: fixed length)", 0.0, 2.0,
                                       0.0, step=0.05, key="cat.launch.se")
        seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="cat.launch.seed")
        launched = st.form_submit_button("Launch CAT", type="primary")
    if not areas:
        st.info("Choose at least one area to launch a live CAT.")
        return None
    try:
        spec = CatRunSpec(
            model=model, backend=backend, year=filters.year, areas=tuple(areas),
            language=language, shots=int(shots), n_paths=int(paths), seed=int(seed),
            settings=dataclasses.replace(settings, se_target=se_target or None).as_dict(),
            model_name=name or None)
    except ValueError as error:
        st.info(f"These settings make no CAT: {error}")
        return None
    st.code(cat_command_line(spec, db_path), language="bash", wrap_lines=True)
    st.caption("The same CAT from a terminal (item selection, θ estimator and test length from "
               "the sidebar); it has the same run id, so either one continues what the other "
               "started. The Launch button runs exactly this command in the background.")
    if launched:
        if not spec.model:
            st.error("Name the model to test.")
        else:
            try:
                check_capacity(runs_dir, config.dashboard.max_concurrent_runs)
                started = start_cat_in_background(spec, db_path, runs_dir)
            except (ValueError, OSError) as error:
                st.error(f"The CAT could not start: {error}")
            else:
                st.session_state[LAUNCHED_KEY] = started.run_id
                st.session_state[ACTIVE_KEY] = True
    return spec


def launched_progress() -> None:
    """The launched CAT's state, refreshed while it works; when it stops working the whole
    page reruns, which stops the refreshing and draws its paths."""
    run_id = st.session_state.get(LAUNCHED_KEY)
    if not run_id:
        return
    runs_dir = runs_directory(database_state().path)

    def draw() -> None:
        state = cat_state(run_id, runs_dir)
        working = state.alive or state.state == "starting"
        if st.session_state.get(ACTIVE_KEY) != working:
            st.session_state[ACTIVE_KEY] = working
            st.rerun()
        text = (f"Live CAT **{run_id}** — {state.words()}. "
                f"Log: `{runs_dir / run_id / 'log.txt'}`.")
        if state.state.startswith(("failed", "stopped")):
            st.warning(text)
        elif state.state == "finished":
            st.success(text + " Its paths are in the sections above for its year and areas.")
        else:
            st.info(text)
            st.progress(min(1.0, state.answers / state.most) if state.most else 0.0)

    active = st.session_state.get(ACTIVE_KEY, False)
    st.fragment(run_every=REFRESH_SECONDS if active else None)(draw)()
