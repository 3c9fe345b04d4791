"""The Runs page's launch panel: the operator's choice of backend, model and settings, the
equivalent command line, and the Launch button.

Local models come from the operator's allow-list (``[models]`` of ``operator.toml``); the
operator at the machine (``launch = "local"``: the browser that opened the operator link) also
gets the bundled SmolLM2 and may type a Hugging Face id, a model folder or a ``.gguf`` file
(``inference.local_models``). Nobody types a URL: API endpoints come from ``[endpoints]`` (so a
key only ever goes where the operator sent it). At most ``max_concurrent_runs`` launched runs
work at once: later launches wait in a queue.
"""

from __future__ import annotations

import dataclasses
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
from inference.local_models import bundled_models, typed_model
from inference.operator_config import AllowedModel, OperatorConfig, allowed_models
from inference.plan import RANDOM_BASELINE, RunSpec, run_grid
from inference.prompt_variants import BASE_VARIANT, REASONING_MAX_NEW_TOKENS, VARIANTS
from inference.protocol import PROMPT_LANGUAGES, SHOT_SETTINGS
from workflows.runs.service import check_queue, command_line, start_in_background

STARTED_KEY = "runs.started"
#: The model list's last choice for the operator at the machine: a model typed below it.
TYPED_MODEL = AllowedModel("Another model: a Hugging Face id, a folder or a .gguf file…", "")
#: The temperatures offered for ``generate`` (the seeds': 0 Khayyam, 0.3 PATCH, 0.6 the paper).
TEMPERATURE_CHOICES = (0.0, 0.3, 0.6, 1.0, 1.5)


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
    variants = middle.multiselect(
        "Prompt variants", list(VARIANTS), default=[BASE_VARIANT], key="runs.variants",
        help="One run per variant: the paper's prompt (base), PATCH's small perturbations of "
             "it, two other wordings, or chain of thought (generate only). Their texts are "
             "under *See the exact prompt* below; the Populations page pools a model's variants.")
    shuffles = right.number_input("Option shuffles per item", 1, 120, 30, key="runs.shuffles",
                                  help="Option permutations per item (default 30, the paper's)")
    seed = right.number_input("Seed", 0, 2**31 - 1, 0, key="runs.seed")
    family = right.text_input("Model family (for grouping)", key="runs.family")
    method, temperatures = _answer_method(right, backend)
    options |= method
    spec = RunSpec(model=model or "", backend=backend, year=filters.year, areas=tuple(areas),
                   languages=tuple(languages), shots=tuple(shots), n_shuffles=int(shuffles),
                   seed=int(seed), backend_options=options, family=family or None)
    specs, problem = _runs(spec, variants, temperatures)
    if problem:
        st.info(problem)
    else:
        st.code(command_line(spec, db_path, variants, temperatures), language="bash",
                wrap_lines=True)
        st.caption(("The same run" if len(specs) == 1 else f"The same {len(specs)} runs")
                   + " from a terminal, runnable as shown (add --background to return at once, "
                   "as the Launch button does); run ids are the same, so either one continues "
                   "what the other started.")
    if st.button("Launch", type="primary", disabled=bool(problem), key="runs.launch"):
        _launch(specs, db_path, runs_dir, config.dashboard.max_concurrent_runs)
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
    chosen = local_model_choice(column, config, key="runs.local_model",
                                at_machine=config.dashboard.launch == "local")
    if chosen is None:
        return None, {}
    return chosen.model, ({"gguf_file": chosen.gguf_file} if chosen.gguf_file else {})


def local_model_choice(column, config: OperatorConfig, key: str, gguf: bool = True,
                       at_machine: bool = False) -> AllowedModel | None:
    """A select box of the local models the operator allows (without GGUF files unless
    ``gguf``); ``at_machine`` (the operator who started the dashboard) adds the bundled models
    first and a last choice that takes a typed model. None, with what to do, when there is no
    model."""
    allowed = allowed_models(config.models)
    if at_machine:
        allowed = bundled_models() + allowed + [TYPED_MODEL]
    choices = [choice for choice in allowed if gguf or choice.gguf_file is None]
    if not choices:
        column.info(f"No local models are allowed yet: put a model folder (with config.json) "
                    f"{'or a .gguf file ' if gguf else ''}in `{config.models.folder}`, or list "
                    "hub ids under [models] in operator.toml.")
        return None
    chosen = column.selectbox(
        "Model", choices, format_func=lambda choice: choice.label, key=key,
        help="The models the operator allows (the models folder and the hub ids of "
             "operator.toml)" + (", the bundled SmolLM2-135M-Instruct, or one you name"
                                 if at_machine else ""))
    if chosen != TYPED_MODEL:
        return chosen
    typed = column.text_input("Hugging Face id, model folder or .gguf file", key=f"{key}.typed",
                              placeholder="HuggingFaceTB/SmolLM2-135M-Instruct")
    try:
        return typed_model(typed)
    except ValueError as problem:
        column.info(str(problem).capitalize() + ".")
        return None


def _answer_method(column, backend: str) -> tuple[dict[str, object], list[float]]:
    """The answer-method controls of ``backend`` (none for the random baseline): the backend
    options they set, and the temperatures of a sweep (several chosen: one run each)."""
    if backend == "random":
        return {}, []
    method = column.selectbox(
        "Answer method", ANSWER_METHODS, index=ANSWER_METHODS.index(DEFAULT_ANSWER_METHOD),
        key="runs.method",
        help="How the model's answer is read. letter-prob: the letters' next-token "
             "probabilities; full-answer-prob: the mean log-probability of each option's text "
             "(openai: only servers that return prompt log-probabilities); generate: a sampled "
             "answer whose letter is parsed, unreadable answers counted and left out.")
    if method != "generate":
        return method_options(backend, method), []
    temperatures = column.multiselect(
        "Temperatures", TEMPERATURE_CHOICES, default=[DEFAULT_TEMPERATURE],
        key="runs.temperatures",
        help="Sampling temperature of generated answers (0 = greedy); several make one run "
             f"each, a sweep whose answers the Conditions page compares. {TEMPERATURE_SOURCES}.")
    max_new_tokens = column.number_input("Max new tokens", 1, 1024, DEFAULT_MAX_NEW_TOKENS,
                                         key="runs.max_new_tokens",
                                         help="Tokens generated per answer (default 24, the "
                                              "project's own: no seed paper fixes one; chain of "
                                              "thought needs more, e.g. "
                                              f"{REASONING_MAX_NEW_TOKENS})")
    first = float(temperatures[0]) if temperatures else DEFAULT_TEMPERATURE
    return (method_options(backend, method, first, int(max_new_tokens)),
            [float(t) for t in temperatures])


def _runs(spec: RunSpec, variants: list[str], temperatures: list[float]
          ) -> tuple[list[RunSpec], str]:
    """The runs these choices make, or why they make none."""
    problem = _problem(spec)
    if not problem and not variants:
        problem = "Choose at least one prompt variant."
    if problem:
        return [], problem
    if spec.backend_options.get("max_new_tokens") == DEFAULT_MAX_NEW_TOKENS:
        # The form's untouched default: each variant takes its own (chain of thought, more).
        options = {k: v for k, v in spec.backend_options.items() if k != "max_new_tokens"}
        spec = dataclasses.replace(spec, backend_options=options)
    try:
        return run_grid(spec, variants, temperatures if len(temperatures) > 1 else ()), ""
    except ValueError as error:
        return [], str(error)


def _problem(spec: RunSpec) -> str:
    """Why these choices make no run ("" when they do)."""
    if not spec.areas or not spec.languages or not spec.shots:
        return "Choose at least one area, one prompt language and one shot setting."
    if not spec.model:
        return "Choose the model to run."
    return ""


def _launch(specs: list[RunSpec], db_path: Path, runs_dir: Path, limit: int) -> None:
    """Start ``specs`` in the background; they wait, queued, while ``limit`` launched runs
    work (refused when the queue cannot take them all)."""
    try:
        check_queue(runs_dir, launching=len(specs))
        started = [start_in_background(spec, db_path, runs_dir, slots=limit) for spec in specs]
    except (ValueError, OSError) as error:
        st.error(f"The run could not start: {error}")
        return
    names = ", ".join(f"**{run.run_id}**" for run in started)
    # Kept for the reruns that follow (the tables refresh themselves while it works).
    st.session_state[STARTED_KEY] = (
        f"{'Run' if len(started) == 1 else f'{len(started)} runs'} {names} started (process "
        f"{', '.join(str(run.pid) for run in started)}). Follow the progress under "
        "*Runs on this machine* below; you can leave this page, it keeps going. A finished run "
        "is published into the database, appears under *Runs in the database* and on every "
        "page (pick it in the sidebar's Runs). Its log is "
        f"`{started[0].folder / 'log.txt'}`" + (" (and likewise for the others)."
                                                if len(started) > 1 else "."))
