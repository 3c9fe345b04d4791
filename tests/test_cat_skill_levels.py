"""The CAT seed's diagnostic report (its Table 1 / Fig. 5): θ̂ per group of ENEM skills for each
model series beside the mean θ̂ of the top 20% and top 50% of humans, recomputed by hand from
the stored rows (the response strings read character by character, the EAP written out on its
grid), the rank line and the table's marks on worked numbers, and the page that draws them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from cli.main import main
from store.cat_queries import candidate_sample
from store.connection import connected
from store.item_queries import area_items
from store.layout import copy_store
from store.model_queries import model_pattern_matrix
from tests.page_support import assert_clean, charts, decoded, run_page
from workflows.cat.skills import (
    COMPETENCIES,
    HUMAN_SAMPLE,
    human_group_levels,
    level_table,
    marked_cells,
    model_group_theta,
    rank_line,
    skill_groups,
)

YEAR, AREA = 2023, "CN"
#: The demo's random-baseline run (backend ``random``).
RANDOM_LABEL = "random-baseline · 0-shot · 30 shuffles"
#: INEP's grid, prior N(0, 1) and D = 1: the demo year's scoring recipe.
GRID = np.linspace(-4.0, 4.0, 40)


def _eap(items: list[tuple[float, float, float, bool]]) -> float:
    """The posterior mean of answers (a, b, c, right) on GRID with a N(0, 1) prior."""
    weights = []
    for q in GRID:
        w = math.exp(-0.5 * q * q)
        for a, b, c, right in items:
            p = c + (1 - c) / (1 + math.exp(-a * (q - b)))
            w *= p if right else 1 - p
        weights.append(w)
    return sum(w * q for w, q in zip(weights, GRID, strict=True)) / sum(weights)


# ENEM's Matriz de Referência: each area's competências as ranges of its skills.
def test_competencies_follow_the_matriz_de_referencia():
    assert [len(COMPETENCIES[a]) for a in ("CH", "CN", "LC", "MT")] == [6, 8, 9, 7]
    for area, ranges in COMPETENCIES.items():
        covered = [h for low, high in ranges for h in range(low, high + 1)]
        assert covered == list(range(1, 31)), area
    cn = skill_groups("CN", np.array([1, 4, 5, 7, 8, 12, 13, 16, 17, 19, 20, 23, 24, 27, 28, 30]),
                      "competency")
    assert cn.tolist() == ["C1", "C1", "C2", "C2", "C3", "C3", "C4", "C4", "C5", "C5", "C6",
                           "C6", "C7", "C7", "C8", "C8"]
    assert skill_groups("MT", np.array([5, 6, 23, 24, 26, 27]), "competency").tolist() == \
        ["C1", "C2", "C5", "C6", "C6", "C7"]
    assert skill_groups("LC", np.array([8, 9, 24, 25, 28]), "competency").tolist() == \
        ["C2", "C3", "C7", "C8", "C9"]
    assert skill_groups("CH", np.array([5, 6, 25, 26]), "competency").tolist() == \
        ["C1", "C2", "C5", "C6"]
    assert skill_groups("CN", np.array([3, 30]), "skill").tolist() == ["H3", "H30"]


@pytest.fixture(scope="module")
def forms(pages_demo_db) -> dict[int, list[tuple]]:
    """Every CN booklet of the demo as (item_id, key, a, b, c, skill) in response order."""
    with connected(pages_demo_db, read_only=True) as con:
        rows = con.execute(
            "SELECT booklet_id, item_id, key, a, b, c, skill, abandoned FROM items "
            "WHERE year = ? AND area = ? AND position IS NOT NULL ORDER BY booklet_id, co_posicao",
            [YEAR, AREA]).fetchall()
    out: dict[int, list[tuple]] = {}
    for booklet, item, key, a, b, c, skill, abandoned in rows:
        out.setdefault(booklet, []).append((item, key, a, b, c, skill, abandoned))
    return out


def _group(skill: int) -> str:
    for number, (low, high) in enumerate(COMPETENCIES[AREA], start=1):
        if low <= skill <= high:
            return f"C{number}"
    raise AssertionError(skill)


@pytest.fixture(scope="module")
def humans_by_hand(pages_demo_db, forms) -> dict[str, dict[str, float]]:
    """{level: {group: mean θ̂}} of the top 20% and 50% of the seeded sample, by hand."""
    with connected(pages_demo_db, read_only=True) as con:
        sample = candidate_sample(con, YEAR, AREA, HUMAN_SAMPLE, 0)
    per_person = []
    for responses, booklet in zip(sample["responses"], sample["booklet_id"], strict=True):
        answers: dict[str, list] = {}
        form = forms[int(booklet)]
        for char, (_, key, a, b, c, skill, abandoned) in zip(responses, form, strict=True):
            if a is None or key in (None, "X") or abandoned or skill is None:
                continue
            answers.setdefault(_group(int(skill)), []).append((a, b, c, char == key))
        per_person.append({group: _eap(items) for group, items in answers.items()})
    theta = sample["theta"].to_numpy()
    levels = {}
    for level, share in (("High", 0.8), ("Mid", 0.5)):
        members = theta >= np.quantile(theta, share)
        frame = pd.DataFrame([p for p, m in zip(per_person, members, strict=True) if m])
        levels[level] = frame.mean().to_dict()
    return levels


@pytest.fixture(scope="module")
def models_by_hand(pages_demo_db) -> dict[str, dict[str, float]]:
    """{run label: {group: mean over its pt 0-shot patterns of the pattern's θ̂}}, by hand."""
    with connected(pages_demo_db, read_only=True) as con:
        runs = con.execute("SELECT run_id, label FROM model_runs ORDER BY label").fetchall()
        params = {item: (a, b, c, skill) for item, a, b, c, skill in con.execute(
            "SELECT DISTINCT item_id, a, b, c, skill FROM items WHERE year = ? AND area = ? "
            "AND a IS NOT NULL AND NOT coalesce(abandoned, false)", [YEAR, AREA]).fetchall()}
        out = {}
        for run_id, label in runs:
            rows = con.execute(
                "SELECT shuffle, booklet_id, item_id, correct FROM model_responses "
                "WHERE run_id = ? AND area = ? AND prompt_language = 'pt' AND shots = 0",
                [run_id, AREA]).fetchall()
            patterns: dict[tuple, dict[str, list]] = {}
            for shuffle, booklet, item, correct in rows:
                if item not in params or params[item][3] is None:
                    continue
                a, b, c, skill = params[item]
                patterns.setdefault((shuffle, booklet), {}).setdefault(
                    _group(int(skill)), []).append((a, b, c, bool(correct)))
            thetas = pd.DataFrame([{g: _eap(items) for g, items in groups.items()}
                                   for groups in patterns.values()])
            out[label] = thetas.mean().to_dict()
    return out


def test_model_theta_per_competency_equals_the_hand_computation(pages_demo_db, models_by_hand):
    with connected(pages_demo_db, read_only=True) as con:
        patterns = model_pattern_matrix(con, YEAR, AREA, None, "pt", 0, list(models_by_hand))
        items = area_items(con, YEAR, AREA)
    report = model_group_theta(patterns, items, AREA, "competency")
    assert set(report["model"]) == set(models_by_hand)
    for label, groups in models_by_hand.items():
        rows = report[report["model"] == label].set_index("group")
        assert sorted(rows.index) == sorted(groups)
        for group, value in groups.items():
            assert rows.loc[group, "theta"] == pytest.approx(value, abs=1e-10), (label, group)
        assert (rows["patterns"] == 30).all()


def test_human_levels_equal_the_hand_computation(pages_demo_db, humans_by_hand):
    levels = human_group_levels(pages_demo_db, YEAR, AREA, "competency", seed=0)
    frame = levels.frame.set_index(["level", "group"])["theta"]
    for level, groups in humans_by_hand.items():
        for group, value in groups.items():
            assert frame.loc[(level, group)] == pytest.approx(value, abs=1e-10), (level, group)
    assert set(frame.index.get_level_values("level")) == {"High", "Mid"}
    people = levels.frame.groupby("level")["people"].max()
    assert people["High"] == pytest.approx(0.2 * HUMAN_SAMPLE, abs=5)
    assert people["Mid"] == pytest.approx(0.5 * HUMAN_SAMPLE, abs=5)
    # The top 20% outscore the top 50% on every competência.
    wide = levels.frame.pivot(index="group", columns="level", values="theta")
    assert (wide["High"] > wide["Mid"]).all()


def test_rank_line_on_worked_numbers():
    table = pd.DataFrame({"High": [1.0, 1.1, 0.9, 1.0], "Mid": [0.4, 0.5, 0.3, 0.4],
                          "A": [0.46, 0.35, 0.42, 0.41], "B": [-0.5, -0.6, -0.4, -0.5]},
                         index=["C1", "C2", "C3", "C4"])
    # High − A: differences 0.54, 0.75, 0.48, 0.59, far beyond twice their standard error;
    # A − Mid: 0.06, −0.15, 0.12, 0.01 (mean 0.01, SE 0.058): level; Mid − B: 0.9 on average.
    assert rank_line(table) == "High > A ≈ Mid > B"
    assert rank_line(table[["B", "A"]]) == "A > B"


def test_marked_cells_bold_the_best_model_and_mark_the_human_levels():
    table = pd.DataFrame({"High": [1.0, 0.8], "Mid": [0.4, 0.2], "A": [1.2, 0.1],
                          "B": [0.5, 0.3]}, index=["C1", "C2"])
    cells = marked_cells(table)
    assert cells.loc["C1"].tolist() == ["1.00", "0.40", "**1.20** ‡", "0.50 †"]
    assert cells.loc["C2"].tolist() == ["0.80", "0.20", "0.10", "**0.30** †"]
    # Without human levels nothing is marked; the best model is still bold.
    assert marked_cells(table[["A", "B"]]).loc["C2"].tolist() == ["0.10", "**0.30**"]


def test_a_baseline_is_never_bold_marked_or_ranked():
    table = pd.DataFrame({"High": [1.0, 0.8], "Mid": [0.4, 0.2], "A": [0.3, 0.1],
                          "random": [1.2, 0.5]}, index=["C1", "C2"])
    # As a model the random column would be the best of both groups, above High on C1.
    assert marked_cells(table).loc["C1", "random"] == "**1.20** ‡"
    cells = marked_cells(table, baselines=["random"])
    assert cells.loc["C1"].tolist() == ["1.00", "0.40", "**0.30**", "1.20"]
    assert cells.loc["C2"].tolist() == ["0.80", "0.20", "**0.10**", "0.50"]
    # Only a baseline: nothing is bold.
    assert marked_cells(table[["random"]], baselines=["random"]).loc["C1", "random"] == "1.20"
    assert "random" in rank_line(table)
    assert rank_line(table, baselines=["random"]) == rank_line(table.drop(columns="random"))
    models = pd.DataFrame({"model": ["random", "A", "B"] * 2, "group": ["C1"] * 3 + ["C2"] * 3,
                           "theta": [1.0, 0.5, 0.2, 0.9, 0.4, 0.1]})
    assert list(level_table(models, model_order=["random", "B", "A"],
                            baselines=["random"]).columns) == ["B", "A", "random"]


def test_page_never_bolds_or_ranks_the_random_baseline(monkeypatch, pages_demo_db):
    """The demo's CN: SmolLM2 and the random baseline; the baseline's θ̂ is the higher on some
    competências (the table bolded it there), and it is shown as a baseline, not a model."""
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    app = run_page("pages/Adaptive_testing.py", {"section": "Skills"})
    app.selectbox(key="cat.area").set_value(AREA).run()
    assert_clean(app)
    [table] = [m.value for m in app.markdown if m.value.startswith("| group |")]
    lines = [line.split(" | ") for line in table.splitlines()]
    header = [cell.strip("| ") for cell in lines[0]]
    column = next(i for i, name in enumerate(header) if name.startswith(RANDOM_LABEL))
    assert header[column] == f"{RANDOM_LABEL} (baseline: random answers, not a model)"
    assert column == len(header) - 1  # after every model
    smollm = next(i for i, name in enumerate(header) if name.startswith("SmolLM2"))
    rows = [[cell.strip("| ") for cell in line] for line in lines[2:]]
    assert rows and all("**" not in row[column] for row in rows)
    assert all(row[column] == "—" or "†" not in row[column] and "‡" not in row[column]
               for row in rows)
    # The baseline is the higher of the two on some group: there SmolLM2 is bold all the same.
    higher = [row for row in rows if row[column] != "—" and row[smollm] != "—"
              and float(row[column]) > float(row[smollm].strip("*†‡ "))]
    assert higher and all(row[smollm].startswith("**") for row in higher)
    rank = next(m.value for m in app.markdown if m.value.startswith(f"**{AREA}:**"))
    assert "SmolLM2" in rank and RANDOM_LABEL not in rank
    captions = " ".join(c.value for c in app.caption)
    assert "a baseline, not a model" in captions
    [figure] = [f for f in charts(app) if "θ̂ by competência" in f["layout"]["title"]["text"]]
    assert f"{RANDOM_LABEL} (baseline: random answers, not a model)" in {
        trace["name"] for trace in figure["data"]}


def test_page_draws_the_levels_report(monkeypatch, pages_demo_db, humans_by_hand,
                                      models_by_hand):
    monkeypatch.setenv("ENEM_DB", str(pages_demo_db))
    app = run_page("pages/Adaptive_testing.py", {"section": "Skills"})
    assert_clean(app)
    app.selectbox(key="cat.area").set_value(AREA).run()
    assert_clean(app)
    [figure] = [f for f in charts(app) if "θ̂ by competência" in f["layout"]["title"]["text"]]
    traces = {trace["name"]: trace for trace in figure["data"]}
    for name, groups in [*humans_by_hand.items(), *models_by_hand.items()]:
        name = next(n for n in traces if n == name or n.startswith(f"{name} ("))
        x = list(traces[name]["x"])
        np.testing.assert_allclose(decoded(traces[name]["y"]), [groups[g] for g in x],
                                   atol=1e-10)
    text = " ".join(m.value for m in app.markdown)
    assert "**CN:**" in text and " > " in text and "High" in text
    table = level_table(
        model_group_theta(
            model_pattern_matrix_for(pages_demo_db, list(models_by_hand)),
            area_items_for(pages_demo_db), AREA, "competency"),
        human_group_levels(pages_demo_db, YEAR, AREA, "competency", seed=0).frame)
    assert rank_line(table, baselines=[RANDOM_LABEL]) in text
    captions = " ".join(c.value for c in app.caption)
    assert "top 20%" in captions and "mean θ̂" in captions and f"{HUMAN_SAMPLE:,}" in captions


def model_pattern_matrix_for(db, labels):
    with connected(db, read_only=True) as con:
        return model_pattern_matrix(con, YEAR, AREA, None, "pt", 0, labels)


def area_items_for(db):
    with connected(db, read_only=True) as con:
        return area_items(con, YEAR, AREA)


@pytest.fixture(scope="module")
def paper_runs_store(tmp_path_factory, real_items_db, real_data):
    """INEP's real 2019–2022 items (no candidates) with the paper's published runs imported."""
    path = tmp_path_factory.mktemp("cat_levels_real") / "real.duckdb"
    copy_store(real_items_db, path)
    results = real_data / "paper-results" / "enem-experiments-results-processed-with-irt-lz.parquet"
    assert main(["import-results", "--db", str(path), str(results)]) == 0
    return path


def test_page_draws_the_models_without_human_levels_on_an_items_only_year(
        monkeypatch, paper_runs_store, capsys):
    capsys.readouterr()
    monkeypatch.setenv("ENEM_DB", str(paper_runs_store))
    app = run_page("pages/Adaptive_testing.py", {"year": "2022", "area": "CN", "lang": "en",
                                                  "section": "Skills"})
    assert_clean(app)
    assert "holds no candidates (item file only): the models are shown without the human " \
           "levels" in " ".join(i.value for i in app.info)
    [figure] = [f for f in charts(app) if "θ̂ by competência" in f["layout"]["title"]["text"]]
    names = {trace["name"] for trace in figure["data"]}
    assert not any(name.startswith(("High", "Mid")) for name in names)
    # Each series is the mean over its 30 seeds of the EAP on the competência's items, by hand.
    with connected(paper_runs_store, read_only=True) as con:
        label, run_id = con.execute(
            "SELECT label, run_id FROM model_runs WHERE label LIKE 'gpt-3.5%'").fetchone()
        rows = con.execute(
            "SELECT m.shuffle, m.item_id, m.correct, i.a, i.b, i.c, i.skill FROM model_responses m "
            "JOIN (SELECT DISTINCT item_id, a, b, c, skill FROM items WHERE year = 2022 "
            "      AND a IS NOT NULL AND NOT coalesce(abandoned, false)) i USING (item_id) "
            "WHERE m.run_id = ? AND m.area = 'CN' AND m.prompt_language = 'en'",
            [run_id]).fetchall()
    patterns: dict[int, dict[str, list]] = {}
    for shuffle, _, correct, a, b, c, skill in rows:
        patterns.setdefault(shuffle, {}).setdefault(_group(int(skill)), []).append(
            (a, b, c, bool(correct)))
    expected = pd.DataFrame([{g: _eap(items) for g, items in groups.items()}
                             for groups in patterns.values()]).mean()
    assert len(patterns) == 30
    trace = next(t for t in figure["data"] if t["name"] == label)
    np.testing.assert_allclose(decoded(trace["y"]), expected[list(trace["x"])], atol=1e-10)
    text = " ".join(m.value for m in app.markdown)
    assert "**CN:**" in text and label in text
