"""Prompt variants as a run dimension: the texts (PATCH's perturbations of the paper's prompt,
other wordings, chain of thought), the runs a sweep makes, and runs of the random baseline and
a tiny model end to end: the variants stored with their texts, shown in the labels and on the
Conditions and Populations pages' numbers, and pooled by random effects."""

from __future__ import annotations

import json
import re
import shlex

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.meta_analysis import combine_effects

from cli.errors import UsageError
from cli.main import build_parser
from cli.run_commands import specs_from_args
from dashboard.conditions import data as cd
from dashboard.populations.models import model_summaries, variant_estimates
from inference.answer_methods import parse_letter
from inference.plan import RunSpec, run_grid
from inference.prompt_variants import (
    BASE_VARIANT,
    PATCH_PERTURBATIONS,
    REASONING_MAX_NEW_TOKENS,
    VARIANT_SETS,
    VARIANTS,
    expand_variant_names,
    variant,
)
from inference.prompts import build_prompt_parts, build_request
from inference.questions import Question
from store.condition_queries import condition_patterns
from store.connection import connected
from store.population_queries import model_patterns
from testbed.tiny_model import build_tiny_model
from tests.db_support import query_frame, query_rows
from tests.openai_support import cli_exit_code, openai_run_args
from tests.page_support import assert_clean
from tests.runs_page_support import labelled, open_runs, wait_for
from workflows.runs.execution import execute_run
from workflows.runs.service import list_runs, project_command

#: The paper's instruction, typed out from its prompt (Beyond accuracy, A.4).
PAPER_INSTRUCTION = ("Here are some questions from a college entrance exam. Choose the correct "
                     "answer to the best of your ability, and output in the following format:\n"
                     "Answer: (Option)")


def _words(text: str) -> list[str]:
    """The words of ``text``, lower-cased, without list marks: what a perturbation keeps."""
    return sorted(re.findall(r"[^\W\d_]+", text.lower()))


@pytest.mark.parametrize("language", ["en", "pt"])
def test_patch_perturbations_keep_every_word_and_change_the_text(language):
    base = variant(BASE_VARIANT).instruction(language)
    texts = [v.instruction(language) for v in PATCH_PERTURBATIONS]
    assert len(PATCH_PERTURBATIONS) == 10 and len(set(texts + [base])) == 11
    for perturbed in PATCH_PERTURBATIONS:
        # Small perturbations: the same words, only case, spacing, marks and order change.
        assert _words(perturbed.instruction(language)) == _words(base), perturbed.name
    assert VARIANT_SETS["patch"] == (BASE_VARIANT, *(v.name for v in PATCH_PERTURBATIONS))


def test_the_base_prompt_is_the_papers_and_variants_change_only_the_instruction():
    assert variant(BASE_VARIANT).instruction("en") == PAPER_INSTRUCTION
    question = Question(year=2023, area="MT", language="en", stem="How much is 2 + 2?",
                        options=("1", "2", "3", "4", "5"), key="D", annulled=False,
                        item_id=7)
    base = build_prompt_parts(question)
    assert base.prefix == PAPER_INSTRUCTION + "\n\n" and base.suffix == "Answer: ("
    for name in VARIANTS:
        parts = build_prompt_parts(question, prompt_variant=name)
        assert parts.stem == base.stem and parts.options_block == base.options_block
        assert parts.prefix == variant(name).instruction("en") + "\n\n"
        assert parts.suffix == ("Let's think step by step." if name == "chain-of-thought"
                                else "Answer: (")
    assert build_prompt_parts(question, prompt_variant="lowercase-heading").prefix.startswith(
        "here are some questions")
    request = build_request(question, (), np.array([[0, 1, 2, 3, 4]]),
                            prompt_variant="chain-of-thought")
    assert request.meta["reasoning"] is True
    assert build_request(question, (), np.array([[0, 1, 2, 3, 4]])).meta["reasoning"] is False


def test_a_reasoning_answer_is_read_from_its_last_answer():
    text = ("A) cannot be right. (B) looks tempting, but option C fits better.\n"
            "Answer: (D)")
    assert parse_letter(text) == 0  # the opening letter: the plain reading
    assert parse_letter(text, reasoning=True) == 3
    assert parse_letter("Maybe (B), maybe (E).", reasoning=True) == 4
    assert parse_letter("I cannot tell.", reasoning=True) < 0


def test_run_ids_of_base_runs_do_not_change_and_variants_get_their_own():
    spec = RunSpec(model="m", backend="random", year=2022)
    # The id this spec had before prompt variants existed: its folder still resumes.
    assert spec.run_id == "m-random-2022-f92b74b6"
    ids = {s.run_id for s in run_grid(spec, ["patch"])}
    assert len(ids) == 11 and spec.run_id in ids
    assert expand_variant_names(["bullets", "patch"])[:2] == ("bullets", BASE_VARIANT)
    with pytest.raises(ValueError, match="unknown prompt variant 'shouting'"):
        expand_variant_names(["shouting"])


def test_chain_of_thought_and_temperature_sweeps_need_generated_answers():
    letters = RunSpec(model="m", backend="openai", year=2022)
    with pytest.raises(ValueError, match="only the generate answer method"):
        run_grid(letters, ["chain-of-thought"])
    with pytest.raises(ValueError, match="generate answer method only"):
        run_grid(letters, [BASE_VARIANT], [0.0, 0.6])
    generate = RunSpec(model="m", backend="openai", year=2022,
                       backend_options={"answer_method": "generate"})
    sweep = run_grid(generate, [BASE_VARIANT, "chain-of-thought"], [0.0, 1.0])
    assert [(s.prompt_variant, s.backend_options.get("temperature")) for s in sweep] == [
        (BASE_VARIANT, 0.0), (BASE_VARIANT, 1.0),
        ("chain-of-thought", 0.0), ("chain-of-thought", 1.0)]
    assert [s.backend_options.get("max_new_tokens") for s in sweep] == [
        None, None, REASONING_MAX_NEW_TOKENS, REASONING_MAX_NEW_TOKENS]


def test_the_command_line_makes_one_run_per_variant_and_temperature():
    parser = build_parser()
    base = ["run", "--backend", "openai", "--model", "x", "--year", "2023"]
    specs = specs_from_args(parser.parse_args(
        base + ["--answer-method", "generate", "--temperature", "0", "0.3", "0.6",
                "--prompt-variants", "alternatives"]))
    assert len(specs) == 9
    assert {s.prompt_variant for s in specs} == {BASE_VARIANT, "alternative-student",
                                                 "alternative-terse"}
    assert sorted({s.backend_options["temperature"] for s in specs}) == [0.0, 0.3, 0.6]
    [one] = specs_from_args(parser.parse_args(base + ["--answer-method", "generate",
                                                      "--temperature", "0.3"]))
    assert one.backend_options["temperature"] == 0.3 and one.prompt_variant == BASE_VARIANT
    with pytest.raises(UsageError, match="only the generate answer method"):
        specs_from_args(parser.parse_args(base + ["--prompt-variants", "chain-of-thought"]))


def _run(spec: RunSpec, db, runs_dir) -> None:
    assert execute_run(spec, db, runs_dir, batch_items=45).status == "finished"


def _pooled_by_reference(db, run_ids: list[str]) -> tuple[pd.DataFrame, object]:
    """Per run (a variant): the mean θ of its repetitions and the SE of one test, read with
    plain SQL; and statsmodels' DerSimonian–Laird pool of them."""
    per_variant = query_frame(db, """
        SELECT run_id, avg(theta) AS theta, sqrt(avg(theta_se * theta_se)) AS se
        FROM model_scores WHERE run_id IN (SELECT unnest(?)) GROUP BY run_id
        ORDER BY run_id""", [run_ids])
    pooled = combine_effects(per_variant["theta"], per_variant["se"] ** 2,
                             method_re="dl", use_t=False)
    return per_variant, pooled


def _page_pool(db, names: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Populations page's numbers for the model's runs pooled by model."""
    with connected(db, read_only=True) as con:
        patterns = model_patterns(con, 2023, "MT", None, "pt", 0, names, pooled=True)
    variants = variant_estimates(patterns, ("prompt language", "shots", "prompt variant"))
    return variants, model_summaries(variants)


def _labels(db, run_ids: list[str]) -> list[str]:
    rows = query_rows(db, "SELECT run_id, label FROM model_runs WHERE run_id IN "
                          "(SELECT unnest(?)) ORDER BY run_id", [run_ids])
    return [label for _, label in rows]


def test_random_baseline_variants_are_stored_shown_and_pool_as_the_fixed_effect(demo_db,
                                                                               tmp_path):
    spec = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",),
                   n_shuffles=3, seed=4)
    specs = run_grid(spec, [BASE_VARIANT, "bullets", "alternative-terse"])
    for each in specs:
        _run(each, demo_db, tmp_path / "runs")
    ids = [s.run_id for s in specs]
    stored = query_frame(demo_db, "SELECT run_id, label, prompt_type, options FROM model_runs "
                                  "WHERE run_id IN (SELECT unnest(?))", [ids])
    by_run = {row.run_id: json.loads(row.options)["prompt_variant"]
              for row in stored.itertuples()}
    for each in specs:
        recorded = by_run[each.run_id]
        assert recorded["name"] == each.prompt_variant
        assert recorded["instructions"] == {"pt": variant(each.prompt_variant).instruction("pt")}
    assert sorted(stored["label"]) == ["random-baseline · 0-shot · 3 shuffles",
                                       "random-baseline · 0-shot · alternative-terse · 3 shuffles",
                                       "random-baseline · 0-shot · bullets · 3 shuffles"]
    # The random baseline does not read its prompt: the variants answer alike, so they agree
    # exactly and the random-effects pool is the fixed-effect pool.
    per_variant, reference = _pooled_by_reference(demo_db, ids)
    assert per_variant["theta"].nunique() == 1
    variants, summaries = _page_pool(demo_db, list(stored["label"]))
    assert sorted(variants["variant"]) == ["pt · 0-shot · prompt alternative-terse",
                                           "pt · 0-shot · prompt base",
                                           "pt · 0-shot · prompt bullets"]
    [pooled] = summaries.itertuples()
    assert pooled.tau2 == 0 and pooled.variants == 3
    assert pooled.theta == pytest.approx(reference.mean_effect_fe)
    assert pooled.se == pytest.approx(reference.sd_eff_w_fe)
    # Conditions: one level per variant, base first.
    with connected(demo_db, read_only=True) as con:
        patterns = condition_patterns(con, [2023], ["MT"], list(stored["label"]))
    rows = cd.compared_patterns(patterns, "prompt variant", "θ (EAP)", language="pt", shots=0,
                                year=2023)
    assert cd.level_order(rows["level"]) == [BASE_VARIANT, "alternative-terse", "bullets"]
    assert set(rows["series"]) == {"random-baseline"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny_variants") / "tiny")


def test_a_tiny_models_variants_pool_by_random_effects(demo_db, tmp_path, tiny):
    spec = RunSpec(model=str(tiny), backend="transformers", year=2023, areas=("MT",),
                   n_shuffles=2, seed=3, model_name="tiny")
    specs = run_grid(spec, [BASE_VARIANT, "uppercase-heading", "numbered", "alternative-student"])
    for each in specs:
        _run(each, demo_db, tmp_path / "runs")
    ids = [s.run_id for s in specs]
    per_variant, reference = _pooled_by_reference(demo_db, ids)
    # The model reads its prompt: the instruction changes its answers.
    answers = query_frame(demo_db, """SELECT run_id, string_agg(choice, '' ORDER BY position,
                                      shuffle) AS choices FROM model_responses
                                      WHERE run_id IN (SELECT unnest(?)) GROUP BY run_id""",
                          [ids])
    assert answers["choices"].nunique() > 1
    variants, summaries = _page_pool(demo_db, _labels(demo_db, ids))
    assert sorted(variants["theta"]) == pytest.approx(sorted(per_variant["theta"]))
    assert sorted(variants["se"]) == pytest.approx(sorted(per_variant["se"]))
    [pooled] = summaries.itertuples()
    # statsmodels keeps a negative moment estimate of τ²; DerSimonian–Laird truncates it at 0
    # (the variants then agree within their SEs, and the pool is the fixed-effect one).
    disagree = reference.tau2 > 0
    assert pooled.tau2 == pytest.approx(max(reference.tau2, 0.0), abs=1e-12)
    assert pooled.theta == pytest.approx(reference.mean_effect_re if disagree
                                         else reference.mean_effect_fe)
    assert pooled.se == pytest.approx(reference.sd_eff_w_re if disagree
                                      else reference.sd_eff_w_fe)
    # Never narrower than the fixed-effect pool; wider exactly when the variants disagree.
    assert pooled.se >= reference.sd_eff_w_fe * (1 - 1e-12)
    assert (pooled.se > reference.sd_eff_w_fe * (1 + 1e-9)) == disagree


def test_variants_that_disagree_widen_the_pooled_interval(demo_db, tmp_path, chat_endpoint):
    # A prompt-sensitive endpoint: under the numbered instruction it answers every question
    # right, under the paper's it always answers (B).
    texts = query_frame(demo_db, """SELECT stem, option_a, option_b, option_c, option_d,
                                    option_e, key FROM question_texts
                                    WHERE year = 2023 AND language = 'pt'""")
    right_option = {row.stem.strip(): getattr(row, f"option_{row.key.lower()}").strip()
                    for row in texts.itertuples() if row.key}

    def reply(prompt: str):
        if not prompt.startswith("1. "):
            return [("B", np.log(0.9)), ("A", np.log(0.1))], 0.0
        asked = prompt.rsplit("Questão: ", 1)[1].split("\nAlternativas:\n")
        option = right_option[asked[0].strip()]
        shown = re.search(rf"^\(([A-E])\) {re.escape(option)}$", asked[1], re.MULTILINE)
        letter = shown.group(1)
        return [(letter, np.log(0.9)), ("A" if letter != "A" else "B", np.log(0.1))], 0.0

    chat_endpoint.reply = reply
    assert cli_exit_code(openai_run_args(demo_db, tmp_path / "runs", chat_endpoint.url,
                                         "--prompt-variants", "base", "numbered")) == 0
    ids = [row[0] for row in query_rows(demo_db, "SELECT run_id FROM model_runs "
                                                 "WHERE backend = 'openai'")]
    assert len(ids) == 2
    per_variant, reference = _pooled_by_reference(demo_db, ids)
    assert per_variant["theta"].max() - per_variant["theta"].min() > 2
    _, summaries = _page_pool(demo_db, _labels(demo_db, ids))
    [pooled] = summaries.itertuples()
    assert reference.tau2 > 0 and pooled.tau2 == pytest.approx(reference.tau2)
    assert pooled.theta == pytest.approx(reference.mean_effect_re)
    assert pooled.se == pytest.approx(reference.sd_eff_w_re)
    # Prompt sensitivity is in the interval: far wider than pooling the two as one measurement.
    assert pooled.se > 3 * reference.sd_eff_w_fe


@pytest.mark.usefixtures("as_operator")
def test_the_runs_page_launches_one_run_per_variant_and_shows_every_text(runs_page_db):
    app = open_runs()
    labelled(app.main.selectbox, "Backend").set_value("random")
    labelled(app.main.multiselect, "Areas").set_value(["MT"])
    labelled(app.main.number_input, "Option shuffles per item").set_value(2)
    labelled(app.main.multiselect, "Prompt variants").set_value([BASE_VARIANT, "numbered"])
    labelled(app.button, "Launch").click().run()
    assert_clean(app)
    words = shlex.split(app.code[0].value)
    assert words[words.index("--prompt-variants") + 1:][:2] == [BASE_VARIANT, "numbered"]
    specs = specs_from_args(build_parser().parse_args(words[len(project_command()):]))
    runs_dir = runs_page_db.parent / "runs"
    assert sorted(run.run_id for run in list_runs(runs_dir)) == sorted(s.run_id for s in specs)
    assert app.success[0].value.startswith("2 runs ")
    wait_for(lambda: all(run.state == "finished" and not run.alive
                         for run in list_runs(runs_dir)))
    labels = _labels(runs_page_db, [s.run_id for s in specs])
    assert sorted(labels) == ["random-baseline · 0-shot · 2 shuffles",
                              "random-baseline · 0-shot · numbered · 2 shuffles"]
    # Every variant's instruction, in both languages, is on the page.
    [table] = [frame.value for frame in app.dataframe if "variant" in frame.value.columns]
    assert list(table["variant"]) == list(VARIANTS)
    assert table.set_index("variant").loc["numbered", "instruction (pt)"] == variant(
        "numbered").instruction("pt")
    labelled(app.main.selectbox, "Prompt variant").set_value("chain-of-thought").run()
    prompt = app.code[-1].value
    assert prompt.startswith(variant("chain-of-thought").instruction("pt"))
    assert prompt.endswith("Vamos pensar passo a passo.")
