"""The Runs page's launch panel: the operator's choice of backend, model and settings, the
equivalent command line, and the Launch button.

Nothing here takes a path, a URL or a hub id as typed text: local models come from the
operator's allow-list (``[models]`` of ``operator.toml``), API endpoints from its
``[endpoints]`` (so a key only ever goes where the operator sent it), and at most
``max_concurrent_runs`` launched runs work at once: later launches wait in a queue.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.state.filters import Filters
from enem.areas import AREAS
from inference.answer_methods import (
    ANSWER_METHODS,
    DEFAULT_ANSWER_METHOD,
    DEFAULT_MAX_NEW_TOKENS,
    DEFAULT_TEMPERATURE,
    TEMPERATURE_SOURCES,
    method_options,
)
from inference.backends import available_backends
from inference.operator_config import AllowedModel, OperatorConfig, allowed_models
from inference.plan import RANDOM_BASELINE, RunSpec
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from workflows.runs.service import check_queue, command_line, start_in_background

STARTED_KEY = "runs.started"


def launch_panel(filters: Filters, db_path: Path, runs_dir: Path,
                 config: OperatorConfig) -> None:
    """The launch controls, the command line of what they describe, and the Launch button."""
    left, middle, right = st.columns(3)
    backends = available_backends()
    # The random baseline needs nothing the operator must set up, so its command is runnable.
    backend = left.selectbox("Backend", backends, index=backends.index("random"),
                             key="runs.backend",
                             help="transformers: a local model the operator allows (CUDA when "
                                  "present, else CPU); openai: an OpenAI-compatible endpoint "
                                  "the operator configured; random: the baseline")
    model, options = _model_choice(left, backend, config)
    areas = middle.multiselect("Areas", AREAS, default=list(AREAS), key="runs.areas")
    languages = middle.multiselect("Prompt languages", PROMPT_LANGUAGES,
                                   default=[PROMPT_LANGUAGES[0]], key="runs.languages")
    shots = middle.multiselect(
        "Shots", SHOT_SETTINGS, default=[SHOT_SETTINGS[0]], key="runs.shots",
        help="1-shot: the easiest (lowest b) item of the asked subject from the 2021 exam, as "
             "in the paper (Beyond accuracy A.4), when the store holds it; else the latest "
             "earlier exam, then a later one, then the asked exam itself (recorded as the run's "
             "shots_source). 4-shot: the four subjects' examples, their keys on different "
             "letters.")
    shuffles = right.number_input("Option shuffles per item", 1, 120, 30, key="runs.shuffles",
                                  help="Option permutations per item (default 30, the paper's)")
    seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="runs.seed")
    family = right.text_input("Model family (for grouping)", key="runs.family")
    options |= _answer_method(right, backend)
    spec = RunSpec(model=model or "", backend=backend, year=filters.year, areas=tuple(areas),
                   languages=tuple(languages), shots=tuple(shots), n_shuffles=int(shuffles),
                   seed=int(seed), backend_options=options, family=family or None)
    problem = _problem(spec)
    if problem:
        st.info(problem)
    else:
        st.code(command_line(spec, db_path), language="bash", wrap_lines=True)
        st.caption("The same run from a terminal, runnable as shown (add --background to "
                   "return at once, as the Launch button does); it has the same run id, so "
                   "either one continues what the other started.")
    if st.button("Launch", type="primary", disabled=bool(problem), key="runs.launch"):
        _launch(spec, db_path, runs_dir, config.dashboard.max_concurrent_runs)
    if st.session_state.get(STARTED_KEY):
        st.success(st.session_state[STARTED_KEY])


def _model_choice(column, backend: str, config: OperatorConfig
                  ) -> tuple[str | None, dict[str, object]]:
    """The model (None when none is chosen) and the backend options the choice sets."""
    if backend == "random":
        return RANDOM_BASELINE, {}
    if backend == "openai":
        names = [endpoint.name for endpoint in config.endpoints]
        name = column.selectbox("Endpoint", names, key="runs.endpoint",
                                help="The OpenAI-compatible endpoints of the operator's "
                                     "operator.toml; a key goes only to the endpoint it is "
                                     "configured for.")
        endpoint = config.endpoint(name)
        if endpoint.models:
            model = column.selectbox("Model", endpoint.models, key="runs.endpoint_model")
        else:
            model = column.text_input("Model name at this endpoint", key="runs.api_model")
        return model.strip() or None, {"base_url": endpoint.base_url}
    chosen = local_model_choice(column, config, key="runs.local_model")
    if chosen is None:
        return None, {}
    return chosen.model, ({"gguf_file": chosen.gguf_file} if chosen.gguf_file else {})


def local_model_choice(column, config: OperatorConfig, key: str,
                       gguf: bool = True) -> AllowedModel | None:
    """A select box of the local models the operator allows (without GGUF files unless
    ``gguf``); None, with what to do, when there are none."""
    choices = [choice for choice in allowed_models(config.models)
               if gguf or choice.gguf_file is None]
    if not choices:
        column.info(f"No local models are allowed yet: put a model folder (with config.json) "
                    f"{'or a .gguf file ' if gguf else ''}in `{config.models.folder}`, or list "
                    "hub ids under [models] in operator.toml.")
        return None
    return column.selectbox("Model", choices, format_func=lambda choice: choice.label, key=key,
                            help="The models the operator allows: the models folder and the "
                                 "hub ids of operator.toml")


def _answer_method(column, backend: str) -> dict[str, object]:
    """The answer-method controls of ``backend`` (none for the random baseline)."""
    if backend == "random":
        return {}
    method = column.selectbox(
        "Answer method", ANSWER_METHODS, index=ANSWER_METHODS.index(DEFAULT_ANSWER_METHOD),
        key="runs.method",
        help="How the model's answer is read. letter-prob: the letters' next-token "
             "probabilities; full-answer-prob: the mean log-probability of each option's text "
             "(openai: only servers that return prompt log-probabilities); generate: a sampled "
             "answer whose letter is parsed, unreadable answers counted and left out.")
    if method != "generate":
        return method_options(backend, method)
    temperature = column.number_input("Temperature", 0.0, 2.0, DEFAULT_TEMPERATURE, step=0.1,
                                      key="runs.temperature",
                                      help="Sampling temperature of generated answers "
                                           f"(0 = greedy). {TEMPERATURE_SOURCES}.")
    max_new_tokens = column.number_input("Max new tokens", 1, 512, DEFAULT_MAX_NEW_TOKENS,
                                         key="runs.max_new_tokens",
                                         help="Tokens generated per answer (default 24, the "
                                              "project's own: no seed paper fixes one)")
    return method_options(backend, method, float(temperature), int(max_new_tokens))


def _problem(spec: RunSpec) -> str:
    """Why these choices make no run ("" when they do)."""
    if not spec.areas or not spec.languages or not spec.shots:
        return "Choose at least one area, one prompt language and one shot setting."
    if not spec.model:
        return "Choose the model to run."
    return ""


def _launch(spec: RunSpec, db_path: Path, runs_dir: Path, limit: int) -> None:
    """Start ``spec`` in the background; it waits, queued, while ``limit`` launched runs work
    (refused when the queue is full)."""
    try:
        check_queue(runs_dir)
        started = start_in_background(spec, db_path, runs_dir, slots=limit)
    except (ValueError, OSError) as error:
        st.error(f"The run could not start: {error}")
        return
    # Kept for the reruns that follow (the tables refresh themselves while it works).
    st.session_state[STARTED_KEY] = (
        f"Run **{started.run_id}** started (process {started.pid}). Follow its progress under "
        "*Runs on this machine* below; you can leave this page, it keeps going. When it "
        "finishes it is published into the database, appears under *Runs in the database* and "
        "on every page (pick it in the sidebar's Runs). Its log is "
        f"`{started.folder / 'log.txt'}`.")
