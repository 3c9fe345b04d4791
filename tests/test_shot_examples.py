"""Where the solved examples come from (Beyond accuracy, A.4): the easiest (lowest b) item of
the same subject from the 2021 exam, for the paper's 2022 and 2023 exams; 4-shot concatenates
the four subjects' examples with their options shuffled so the keys fall on different letters.
Where the store has no 2021 exam the run takes the latest earlier one, then a later one, and
says which (``shots_source``); and each sampling default names its source in ``--help``."""

from __future__ import annotations

import pytest

from cli.main import build_parser
from demo import generate_demo_files
from enem.areas import AREAS
from inference.plan import RunSpec, build_plan, shot_exam
from store.connection import connected
from store.layout import copy_store
from store.model_runs import ExamReader
from store.question_texts import load_question_texts
from workflows.ingest import ingest_items


def test_the_paper_exam_2021_is_taken_whenever_the_store_has_it():
    year, words = shot_exam([2019, 2021, 2023, 2024], asked=2022)
    assert year == 2021 and "2021 exam" in words and "the paper's choice" in words
    assert shot_exam([2021, 2022], asked=2023)[0] == 2021


def test_without_2021_the_latest_earlier_exam_then_a_later_one():
    year, words = shot_exam([2018, 2020, 2024], asked=2022)
    assert year == 2020 and "latest earlier exam" in words and "2021" in words
    year, words = shot_exam([2024, 2025], asked=2022)
    assert year == 2024 and "later exam" in words
    # Asked 2021 itself: the paper's exam is the one asked, so the latest earlier one.
    assert shot_exam([2019, 2020, 2021, 2022], asked=2021)[0] == 2020
    assert shot_exam([], asked=2022) == (None, ("same exam (no other exam with question texts "
                                               "in the store)"))


@pytest.fixture(scope="module")
def three_exams_db(tmp_path_factory, ingested_2023, demo_files_2023):
    """The 2023 demo with its texts, and the items and texts of demo years 2021 and 2024
    (another 2021 is what the paper takes its examples from; 2024 is later)."""
    folder = tmp_path_factory.mktemp("three_exams")
    db = folder / "enem.duckdb"
    copy_store(ingested_2023[0], db)
    texts = [demo_files_2023.questions]
    for year in (2021, 2024):
        files = generate_demo_files(folder / str(year), year=year, n_examinees=10, seed=year,
                                    progress=False)
        ingest_items(db, year, files.items)
        texts.append(files.questions)
    with connected(db) as con:
        for path in texts:
            load_question_texts(con, path)
    return db


def _easiest(con, year: int, area: str, language: str) -> int:
    return int(con.execute(
        """SELECT i.item_id FROM items i JOIN question_texts q USING (year, item_id)
           WHERE i.year = ? AND i.area = ? AND q.language = ? AND NOT q.annulled
             AND i.b IS NOT NULL ORDER BY i.b, i.item_id LIMIT 1""",
        [year, area, language]).fetchone()[0])


@pytest.mark.parametrize("shots", [1, 4])
def test_a_2023_run_takes_its_examples_from_2021(three_exams_db, shots):
    spec = RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT", "CN"),
                   languages=("en",), shots=(shots,), n_shuffles=2, seed=5)
    with connected(three_exams_db, read_only=True) as con:
        plan = build_plan(ExamReader(con), spec)
        easiest = {area: _easiest(con, 2021, area, "en") for area in AREAS}
        # 2024 holds easier items in some area: the paper's year wins all the same.
        assert any(_easiest(con, 2024, area, "en") != easiest[area] for area in AREAS)
    assert plan.shots_source.startswith("the 2021 exam")
    for unit in plan.units:
        examples = unit.shot_examples
        assert all(example.year == 2021 for example in examples)
        if shots == 1:
            assert [e.item_id for e in examples] == [easiest[unit.area]]
        else:
            assert [e.item_id for e in examples] == [easiest[area] for area in AREAS]
            assert len({e.key for e in examples}) == 4  # keys spread over the letters


def test_help_says_where_each_default_comes_from():
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    text = " ".join(run.format_help().split())
    assert "the 2021 exam" in text and "A.4" in text
    assert "0.6" in text and "Beyond accuracy" in text
    assert "PATCH" in text and "0.3" in text and "Khayyam" in text
    assert "30" in text and "the paper's" in text
