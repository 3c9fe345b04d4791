"""export-task: a booklet as an lm-eval task, and its samples imported back.

The task config's keys are lm-eval's (EleutherAI/lm-evaluation-harness
``docs/new_task_guide.md``: "Using Local Datasets", "Multiple choice format"); the samples are
written as lm-eval's ``save_results_samples`` writes a ``multiple_choice`` task's
(``lm_eval/loggers/evaluation_tracker.py``; every leaf of ``resps`` / ``filtered_resps`` a string,
``lm_eval/utils.py`` ``sanitize_list``; one request per choice, context and continuation,
``lm_eval/evaluator.py``). lm-eval 0.4.9 run on such an export with a real model wrote lines of
exactly this shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from cli.main import main
from store.connection import open_reader
from tests.harness_support import LETTERS, STAMP, lm_eval_line
from workflows.runs.service import prompt_text


def _export(db: Path, output: Path, *args: str) -> list[dict]:
    assert main(["--db", str(db), "export-task", "--year", "2023", "--output", str(output),
                 *args]) == 0
    [documents] = output.glob("*.jsonl")
    return [json.loads(line) for line in documents.read_text(encoding="utf-8").splitlines()]


def _sample_line(doc_id: int, doc: dict, chosen: int) -> str:
    """A multiple_choice sample of an exported document whose model gave the shown letter
    ``chosen`` the highest log-likelihood (target_delimiter "": each continuation the letter)."""
    lls = [-3.0 - 0.25 * i for i in range(5)]
    lls[chosen] = -0.5
    requests = [(doc["prompt"], letter) for letter in LETTERS]
    return lm_eval_line(doc_id, doc, str(doc["target"]), requests,
                        [[(ll, False)] for ll in lls], [(ll, False) for ll in lls],
                        {"acc": float(chosen == doc["target"])}, "none")


def _query(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = open_reader(db)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_the_task_config_and_documents(demo_db, tmp_path, capsys):
    output = tmp_path / "tasks"
    documents = _export(demo_db, output, "--area", "MT", "--shuffles", "3", "--seed", "5")
    printed = capsys.readouterr().out
    [config_path] = output.glob("*.yaml")
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    task = config["task"]
    assert config_path.name == f"{task}.yaml" and task in printed
    assert config["dataset_path"] == "json"
    data = Path(config["dataset_kwargs"]["data_files"]["test"])
    assert data.is_absolute() and data == (output / f"{task}.jsonl").resolve()
    assert config["test_split"] == "test" and config["output_type"] == "multiple_choice"
    assert (config["doc_to_text"], config["doc_to_target"]) == ("prompt", "target")
    assert config["doc_to_choice"] == list(LETTERS) and config["target_delimiter"] == ""
    assert config["num_fewshot"] == 0
    assert config["metric_list"] == [{"metric": "acc", "aggregation": "mean",
                                      "higher_is_better": True}]
    assert len(documents) == 45 * 3
    booklet = documents[0]["booklet_id"]
    for doc in documents[:6] + documents[-3:]:
        assert doc["enem_llm_task"] == task
        assert doc["permutation"][doc["target"]] == doc["key"]
        # The prompt is the project's own: what `enem-llm prompt` prints for that shuffle.
        assert doc["prompt"] == prompt_text(
            demo_db, year=2023, area="MT", position=doc["position"], language="pt", shots=0,
            shuffle=doc["shuffle"], n_shuffles=3, seed=5, booklet=booklet)
    assert (documents[0]["shuffle"], documents[0]["permutation"]) == (0, LETTERS)  # in order


def test_samples_of_an_export_import_back_as_the_same_patterns(demo_db, tmp_path, capsys):
    """A simulated model: in shuffle 0 it answers the key of odd positions and the original
    option C otherwise; in shuffles 1 and 2 it always takes the shown letter A. The patterns
    stored must be the ones these choices imply, linked with no --booklet flag."""
    documents = _export(demo_db, tmp_path / "tasks", "--area", "MT", "--shuffles", "3")
    task = documents[0]["enem_llm_task"]
    lines, expected = [], {0: {}, 1: {}, 2: {}}
    for doc_id, doc in enumerate(documents):
        if doc["shuffle"] == 0:
            original = doc["key"] if doc["position"] % 2 else "C"
            chosen = doc["permutation"].index(original)
        else:
            chosen = 0
        expected[doc["shuffle"]][doc["position"]] = \
            "1" if doc["permutation"][chosen] == doc["key"] else "0"
        lines.append(_sample_line(doc_id, doc, chosen))
    folder = tmp_path / "out" / "org__tiny"
    folder.mkdir(parents=True)
    samples = folder / f"samples_{task}_{STAMP}.jsonl"
    samples.write_text("".join(lines), encoding="utf-8")
    capsys.readouterr()
    assert main(["--db", str(demo_db), "import-results", str(samples)]) == 0
    out = capsys.readouterr().out
    assert "samples: 135 linked, 0 skipped, 0 unknown" in out
    assert "abandoned for this run (never counted wrong): 0" in out
    [(run_id, label)] = _query(demo_db, "SELECT run_id, label FROM model_runs")
    assert label == f"tiny · lm-eval {task} · 0-shot · 3 shuffles"
    stored = dict(_query(demo_db, """SELECT shuffle, response_pattern FROM model_scores
                                     WHERE run_id = ?""", [run_id]))
    assert stored == {shuffle: "".join(by_position[p] for p in sorted(by_position))
                      for shuffle, by_position in expected.items()}
    # Choices and probabilities are stored in original letters.
    first = documents[1]
    [(choice, permutation)] = _query(
        demo_db, """SELECT choice, permutation FROM model_responses WHERE run_id = ?
                    AND position = ? AND shuffle = 1""", [run_id, first["position"]])
    assert (choice, permutation) == (first["permutation"][0], first["permutation"])


def test_a_lc_export_answers_the_spanish_form(demo_db, tmp_path, capsys):
    documents = _export(demo_db, tmp_path / "tasks", "--area", "LC", "--shuffles", "1")
    assert {doc["item_language"] for doc in documents} == {1}
    lines = [_sample_line(i, doc, doc["target"]) for i, doc in enumerate(documents)]
    samples = tmp_path / f"samples_{documents[0]['enem_llm_task']}_{STAMP}.jsonl"
    samples.write_text("".join(lines), encoding="utf-8")
    assert main(["--db", str(demo_db), "import-results", str(samples)]) == 0
    [(pattern, language)] = _query(demo_db, "SELECT response_pattern, item_language FROM "
                                            "model_scores")
    assert (pattern, language) == ("1" * 45, 1)


def test_export_refusals_are_one_error_line(demo_db, tmp_path, capsys):
    mt = _query(demo_db, "SELECT min(booklet_id) FROM booklets WHERE area = 'MT'")[0][0]
    code = main(["--db", str(demo_db), "export-task", "--year", "2023", "--area", "CN",
                 "--booklet", str(mt), "--output", str(tmp_path / "t")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"error: booklet {mt} is a booklet of MT, not CN"]
    assert not list((tmp_path).glob("t/*"))
