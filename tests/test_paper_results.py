"""import-results on the paper's published results (the real files), end to end.

Both shared files are imported into a store that holds only the item files of 2019–2022
(items-only ingests). With the paper's grid (121 points on [−6, 6]) our θ and SE reproduce the
published ones; with INEP's grid (the store's default) they are close but not equal.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from cli.main import main
from enem.scoring import DEFAULT_OPTIONS, ScoringOptions
from inference.protocol import LANGUAGE_ALIASES
from store.connection import connected
from store.layout import copy_store
from tests.db_support import query_frame
from workflows.ingest import ingest_items
from workflows.paper_results import paper_model_id
from workflows.results_io import export_run, import_results, import_results_summary

MAIN = "enem-experiments-results-processed-with-irt-lz.parquet"
SHUFFLE = "enem-experiments-results-shuffle-processed-with-irt-lz.parquet"
PAPER_GRID = {"n_quadrature": 121, "theta_range": [-6.0, 6.0]}
PAPER_OPTIONS = ScoringOptions.from_dict({**DEFAULT_OPTIONS.as_dict(), **PAPER_GRID})
MAIN_MODELS = {"gpt-3.5-turbo-0613", "llama2-7b", "llama2-13b", "mistral-7b", "mistral-8x7b"}
SHUFFLE_MODELS = {"gpt-3.5-turbo-0613", "llama2-7b", "llama2-13b", "mistral-7b"}
BOOKLETS = {
    2019: {"CN": 519, "CH": 520, "LC": 521, "MT": 522},
    2020: {"CN": 604, "CH": 574, "LC": 584, "MT": 594},
    2021: {"CN": 916, "CH": 886, "LC": 896, "MT": 906},
    2022: {"CN": 1092, "CH": 1062, "LC": 1072, "MT": 1082},
}
#: INEP's 2019 item file keys MT booklet 522's 16th item D; the paper scored it with E.
KNOWN_KEY_DIFFERENCE = "2019 booklet 522 position 16: file E, store D"
#: l_z is published to 4 decimals.
LZ_TOLERANCE = 1e-4


def _paper_file(real_data, name):
    return real_data / "paper-results" / name


def _scores_of(db, source):
    """Every stored pattern of one source file, with its run's model and repetition."""
    return query_frame(db, """SELECT r.model_id, r.repetition, s.* FROM model_scores s
                         JOIN model_runs r USING (run_id) WHERE r.source = ?
                         ORDER BY ALL""", [source])


@pytest.fixture(scope="module")
def paper_db(tmp_path_factory, real_items_db, real_data):
    """The main file imported, then the shuffle file, both on the paper's grid; with the
    summaries and the main file's patterns as they were before the shuffle file came."""
    db = tmp_path_factory.mktemp("paper") / "enem.duckdb"
    copy_store(real_items_db, db)
    with connected(db) as con:
        main_summary = import_results_summary(con, _paper_file(real_data, MAIN), PAPER_GRID)
    main_before = _scores_of(db, MAIN)
    with connected(db) as con:
        shuffle_summary = import_results_summary(con, _paper_file(real_data, SHUFFLE),
                                                 PAPER_GRID)
    return db, main_summary, shuffle_summary, main_before


def _expected_rows(real_data, name):
    """The published rows with where each must land: model, year, booklet, language, index
    (shuffle k, or the rank of the SEED among the run's seeds)."""
    rows = pd.read_parquet(_paper_file(real_data, name))
    rows["model_id"] = [paper_model_id(n, s) for n, s in zip(rows["MODEL_NAME"],
                                                              rows["MODEL_SIZE"], strict=True)]
    rows["year"] = rows["EXAM_YEAR"].astype(int)
    rows["booklet_id"] = rows["CO_PROVA"].astype(int)
    rows["prompt_language"] = rows["LANGUAGE"].map(LANGUAGE_ALIASES)
    shuffle = rows["ENEM_EXAM_TYPE"].str.extract(r"^shuffle-(\d+)$")[0]
    seed_rank = rows.groupby("model_id")["SEED"].rank(method="dense").astype(int) - 1
    rows["shuffle"] = np.where(shuffle.notna(), shuffle.fillna("-1").astype(int), seed_rank)
    return rows


def test_every_published_row_lands_once_per_model_and_year(paper_db):
    db = paper_db[0]
    counts = query_frame(db, """SELECT r.source, r.model_id, s.year, count(*) AS n
                           FROM model_scores s JOIN model_runs r USING (run_id)
                           GROUP BY ALL""")
    for source, models, total in ((MAIN, MAIN_MODELS, 4800), (SHUFFLE, SHUFFLE_MODELS, 3840)):
        mine = counts[counts["source"] == source]
        assert set(mine["model_id"]) == models
        # 4 areas × 2 prompt languages × 30 repetitions per model and year.
        assert set(mine["n"]) == {4 * 2 * 30}
        assert set(mine["year"]) == set(BOOKLETS)
        assert mine["n"].sum() == total
    answers = query_frame(db, "SELECT count(*) AS n FROM model_responses")["n"][0]
    assert answers == (4800 + 3840) * 45


def test_each_run_carries_the_paper_booklets(paper_db):
    db = paper_db[0]
    booklets = query_frame(db, "SELECT DISTINCT run_id, year, area, booklet_id FROM model_scores")
    expected = {(year, area, booklet) for year, areas in BOOKLETS.items()
                for area, booklet in areas.items()}
    for run_id, rows in booklets.groupby("run_id"):
        forms = set(zip(rows["year"], rows["area"], rows["booklet_id"], strict=True))
        assert forms == expected, run_id
    answered = query_frame(db, """SELECT DISTINCT area, item_language FROM model_responses""")
    languages = dict(zip(answered["area"], answered["item_language"], strict=True))
    assert languages["LC"] == 1  # the Spanish LC form
    assert all(pd.isna(languages[a]) for a in ("CN", "CH", "MT"))


def test_nine_runs_with_distinct_labels_and_their_repetition(paper_db):
    runs = query_frame(paper_db[0], "SELECT * FROM model_runs ORDER BY run_id")
    assert len(runs) == 9 and runs["label"].is_unique and runs["run_id"].is_unique
    by_source = dict(tuple(runs.groupby("source")))
    assert set(by_source[MAIN]["repetition"]) == {"seed"}
    assert set(by_source[SHUFFLE]["repetition"]) == {"shuffle"}
    assert set(by_source[MAIN]["label"]) == {f"{m} · few-shot · 30 seeds" for m in MAIN_MODELS}
    assert set(by_source[SHUFFLE]["label"]) == {f"{m} · few-shot · 30 shuffles"
                                                for m in SHUFFLE_MODELS}
    assert set(runs["years"]) == {"2019,2020,2021,2022"} and set(runs["year"]) == {2019}
    assert set(runs["prompt_type"]) == {"few-shot"} and set(runs["temperature"]) == {0.6}
    assert set(runs["n_shuffles"]) == {30}
    assert all(run_id.startswith("paper-") and f"-{rep}-" in run_id
               for run_id, rep in zip(runs["run_id"], runs["repetition"], strict=True))
    assert {ScoringOptions.from_dict(json.loads(s)) for s in runs["scoring"]} == {PAPER_OPTIONS}


@pytest.mark.parametrize("name", [MAIN, SHUFFLE])
def test_rows_land_in_place_and_reproduce_the_published_scores(paper_db, real_data, name):
    expected = _expected_rows(real_data, name)
    stored = _scores_of(paper_db[0], name)
    keys = ["model_id", "year", "booklet_id", "prompt_language", "shuffle"]
    joined = expected.merge(stored, on=keys, how="outer", validate="one_to_one",
                            indicator=True)
    assert (joined["_merge"] == "both").all()
    assert (joined["response_pattern"] == joined["RESPONSE_PATTERN"]).all()
    assert (joined["sampling_seed"] == joined["SEED"]).all()
    assert np.abs(joined["theta"] - joined["IRT_SCORE"]).max() < 1e-4
    assert np.abs(joined["theta_se"] - joined["IRT_SCORE_SE"]).max() < 1e-4
    assert np.abs(joined["lz"] - joined["LZ_SCORE"]).max() <= LZ_TOLERANCE
    assert np.allclose(joined["published_theta"], joined["IRT_SCORE"])
    assert np.allclose(joined["published_lz"], joined["LZ_SCORE"])
    # A seed index is the same seed in every booklet and language of a run.
    per_index = stored.groupby(["model_id", "shuffle"])["sampling_seed"].nunique()
    assert set(per_index) == {1}


def test_summaries_count_what_landed(paper_db):
    _, main_summary, shuffle_summary, _ = paper_db
    for summary, rows, runs in ((main_summary, 4800, 5), (shuffle_summary, 3840, 4)):
        assert (summary.rows, len(summary.runs), summary.years, summary.booklets) == (
            rows, runs, [2019, 2020, 2021, 2022], 16)
        assert summary.max_theta_diff < 1e-4 and summary.max_se_diff < 1e-4
        assert summary.max_lz_diff <= LZ_TOLERANCE
        assert summary.scoring == [PAPER_OPTIONS]
        # Correctness follows RESPONSE_PATTERN; the only key the paper scored differently.
        assert summary.key_differences == [KNOWN_KEY_DIFFERENCE]
    assert {r.repetition for r in main_summary.runs} == {"seed"}
    assert {r.repetition for r in shuffle_summary.runs} == {"shuffle"}


def test_chosen_letters_are_original_letters(paper_db):
    """TX_RESPOSTAS is in the original letters in both files (the shuffle file included):
    a chosen letter equals the stored key exactly when the pattern says correct."""
    disagree = query_frame(paper_db[0], """
        SELECT r.year, r.booklet_id, r.position, count(*) AS n
        FROM model_responses r JOIN items i ON i.year = r.year
             AND i.booklet_id = r.booklet_id AND i.item_id = r.item_id
             AND (i.item_language IS NULL OR i.item_language = r.item_language)
        WHERE i.a IS NOT NULL AND (r.choice = i.key) <> r.correct GROUP BY ALL""")
    assert set(zip(disagree["year"], disagree["booklet_id"], disagree["position"],
                   strict=True)) == {
        (2019, 522, 16)}


def test_importing_another_file_keeps_the_first(paper_db):
    db, _, _, main_before = paper_db
    pd.testing.assert_frame_equal(_scores_of(db, MAIN), main_before)


def test_importing_a_file_again_changes_nothing(paper_db, real_data, tmp_path):
    db = tmp_path / "again.duckdb"
    copy_store(paper_db[0], db)
    tables = ("model_runs", "model_scores", "model_responses", "models")
    before = {t: query_frame(db, f"SELECT * FROM {t} ORDER BY ALL") for t in tables}
    with connected(db) as con:
        run_ids = import_results(con, _paper_file(real_data, MAIN), PAPER_GRID)
    assert run_ids == paper_db[1].run_ids
    for table in tables:
        pd.testing.assert_frame_equal(query_frame(db, f"SELECT * FROM {table} ORDER BY ALL"),
                                      before[table])


def test_inep_grid_differs_a_little(real_items_db, real_data, tmp_path):
    """Without flags a run is scored with the year's stored settings: INEP's grid here."""
    db = tmp_path / "inep.duckdb"
    copy_store(real_items_db, db)
    with connected(db) as con:
        summary = import_results_summary(con, _paper_file(real_data, MAIN))
    assert summary.scoring == [DEFAULT_OPTIONS]
    assert 1e-5 < summary.max_theta_diff < 1e-2
    assert 1e-5 < summary.max_se_diff < 1e-2
    stored = query_frame(db, "SELECT DISTINCT scoring FROM model_runs")["scoring"]
    assert [ScoringOptions.from_dict(json.loads(s)) for s in stored] == [DEFAULT_OPTIONS]


def _one_year_file(real_data, tmp_path, years):
    rows = pd.read_parquet(_paper_file(real_data, SHUFFLE))
    path = tmp_path / f"shuffle-{'-'.join(map(str, years))}.parquet"
    rows[rows["EXAM_YEAR"].astype(int).isin(years)].to_parquet(path)
    return path


def test_the_years_stored_settings_score_the_run(real_data, tmp_path):
    """A year stored with the paper's grid scores its models on it; a run over years stored
    with different settings needs explicit ones."""
    db = tmp_path / "mixed.duckdb"
    ingest_items(db, 2021, real_data / "items" / "ITENS_PROVA_2021.csv")
    ingest_items(db, 2022, real_data / "items" / "ITENS_PROVA_2022.csv", options=PAPER_OPTIONS)
    with connected(db) as con:
        summary = import_results_summary(con, _one_year_file(real_data, tmp_path, [2022]))
        assert summary.scoring == [PAPER_OPTIONS] and summary.max_theta_diff < 1e-4
        both = _one_year_file(real_data, tmp_path, [2021, 2022])
        with pytest.raises(ValueError, match="different scoring settings"):
            import_results(con, both)
        summary = import_results_summary(con, both, PAPER_GRID)
    assert summary.scoring == [PAPER_OPTIONS] and summary.years == [2021, 2022]


def test_export_and_import_of_a_paper_run_keep_its_published_scores(paper_db, tmp_path):
    db = tmp_path / "export.duckdb"
    copy_store(paper_db[0], db)
    run_id = paper_db[1].run_ids[0]
    query = "SELECT * FROM model_scores WHERE run_id = ? ORDER BY ALL"
    before = query_frame(db, query, [run_id])
    run_before = query_frame(db, "SELECT * FROM model_runs WHERE run_id = ?", [run_id])
    with connected(db) as con:
        export_run(con, run_id, tmp_path / "run.parquet")
        for table in ("model_scores", "model_responses", "model_runs"):
            con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        summary = import_results_summary(con, tmp_path / "run.parquet", PAPER_GRID)
    assert summary.run_ids == [run_id] and summary.max_theta_diff < 1e-4
    pd.testing.assert_frame_equal(query_frame(db, query, [run_id]), before)
    run_after = query_frame(db, "SELECT * FROM model_runs WHERE run_id = ?", [run_id])
    columns = ["years", "repetition", "prompt_type", "temperature", "source", "scoring",
               "label", "n_shuffles"]
    pd.testing.assert_frame_equal(run_after[columns], run_before[columns])


def test_cli_prints_the_summary(real_items_db, real_data, tmp_path, capsys):
    db = tmp_path / "cli.duckdb"
    copy_store(real_items_db, db)
    code = main(["import-results", str(_paper_file(real_data, SHUFFLE)), "--db", str(db),
                 "--grid-points", "121", "--grid-range", "-6", "6"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[0] == (f"imported {SHUFFLE}: 3,840 rows in 4 run(s), "
                        "years 2019, 2020, 2021, 2022, 16 booklets")
    assert lines[1] == "re-scored with EAP, 121 points on [-6, 6], D = 1, ENEM nota"
    gap = re.match(r"largest \|Δθ\| between published and re-scored θ: (\S+) ", lines[2])
    assert gap and float(gap.group(1)) < 1e-4
    assert KNOWN_KEY_DIFFERENCE in lines[3]
    runs = [line.split() for line in lines[4:]]
    assert len(runs) == 4 and all(r[0].startswith("paper-") and r[-1] == "rows" for r in runs)


def test_run_ids_follow_the_files_content(real_items_db, real_data, tmp_path):
    """The same rows under another name and in another order are the same runs; other rows
    (another file) are other runs."""
    db = tmp_path / "ids.duckdb"
    copy_store(real_items_db, db)
    one_year = pd.read_parquet(_one_year_file(real_data, tmp_path, [2022]))
    one_year.iloc[::-1].to_parquet(tmp_path / "renamed.parquet", index=False)
    with connected(db) as con:
        first = import_results(con, tmp_path / "shuffle-2022.parquet")
        again = import_results(con, tmp_path / "renamed.parquet")
        other = import_results(con, _one_year_file(real_data, tmp_path, [2021]))
    assert first == again and not set(first) & set(other)
    assert query_frame(db, "SELECT count(*) AS n FROM model_runs")["n"][0] == 8


def _recorded_order(key_shown: str, key: str, chosen_shown: str, chosen: str) -> str | None:
    """The option order one published answer records, by hand: the original key under the
    letter it was shown at, the original choice under its shown letter, '?' elsewhere."""
    order = ["?"] * 5
    for shown, original in ((key_shown, key), (chosen_shown, chosen)):
        if shown in "ABCDE" and original in "ABCDE" and len(shown) == len(original) == 1:
            order["ABCDE".index(shown)] = original
    return None if order == ["?"] * 5 else "".join(order)


def test_shuffle_answers_keep_where_the_key_and_the_choice_were_shown(paper_db, real_data):
    """TX_GABARITO_SHUFFLE and TX_RESPOSTAS_SHUFFLE give, per answer, the letters the key and
    the chosen option were shown under: the stored order holds exactly those two entries."""
    expected = _expected_rows(real_data, SHUFFLE)
    rows = []
    for row in expected.itertuples():
        for position in range(45):
            rows.append((row.model_id, row.year, row.booklet_id, row.prompt_language,
                         row.shuffle, position + 1, _recorded_order(
                             row.TX_GABARITO_SHUFFLE[position], row.TX_GABARITO[position],
                             row.TX_RESPOSTAS_SHUFFLE[position], row.TX_RESPOSTAS[position])))
    keys = ["model_id", "year", "booklet_id", "prompt_language", "shuffle", "position"]
    wanted = pd.DataFrame(rows, columns=[*keys, "expected"])
    stored = query_frame(paper_db[0], """
        SELECT r.model_id, m.year, m.booklet_id, m.prompt_language, m.shuffle, m.position,
               m.permutation
        FROM model_responses m JOIN model_runs r USING (run_id) WHERE r.source = ?""",
                         [SHUFFLE])
    joined = wanted.merge(stored, on=keys, how="outer", validate="one_to_one", indicator=True)
    assert (joined["_merge"] == "both").all() and len(joined) == 3840 * 45
    same = (joined["permutation"] == joined["expected"]) | (
        joined["permutation"].isna() & joined["expected"].isna())
    assert same.all(), joined[~same].head()
    assert joined["permutation"].notna().mean() > 0.99


def test_seed_answers_record_the_original_order(paper_db):
    """The main file's sampling seeds showed the options in their original order."""
    orders = query_frame(paper_db[0], """
        SELECT DISTINCT m.permutation FROM model_responses m JOIN model_runs r USING (run_id)
        WHERE r.source = ?""", [MAIN])
    assert orders["permutation"].tolist() == ["ABCDE"]
