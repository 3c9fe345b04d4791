"""The paper's key-position experiment (docs/harness.md): files written here in its documented
format over the real 2022 booklets are imported, and ``enem-llm items --table key-position``
prints the five counts per item, the paper's uniformity measure and its r with INEP's b.

The files are built so that the uniformity measures correlate with the real b exactly as the
paper reports (CH 0.2792, CN −0.0933, LC 0.1763, MT 0.0487): the import and the table must
then give back each item's counts and the paper's four correlations to three decimals, which
they only do if every item lands on its own b (booklet order, LC's Spanish form after the
English items) and every order is read as listed.
"""

from __future__ import annotations

import io
import itertools

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy import stats

from analytics.options import key_position_uniformity
from cli.main import main
from dashboard.figures import area_title
from inference.harness.key_position_file import OPTION_ORDERS
from store.layout import copy_store
from tests.page_support import assert_clean, charts, run_page

#: The paper's booklets and its correlations of the uniformity measure with b (REFERENCE §4).
BOOKLETS = {"CH": 1062, "CN": 1092, "LC": 1072, "MT": 1082}
PAPER_R = {"CH": 0.2792, "CN": -0.0933, "LC": 0.1763, "MT": 0.0487}
ORDERS = ["".join(order) for order in itertools.permutations("ABCDE")]
MODEL = "gpt-3.5-turbo-0613"
PAGE = "pages/Options_and_traps.py"


def booklet_items(real_data, area: str) -> pd.DataFrame:
    """The booklet's items as INEP's file lists them, in CO_POSICAO order (LC: the Spanish
    form, TP_LINGUA ≠ 0)."""
    table = pd.read_csv(real_data / "items" / "ITENS_PROVA_2022.csv", sep=";",
                        encoding="latin-1")
    form = table[table["CO_PROVA"] == BOOKLETS[area]]
    if area == "LC":
        form = form[form["TP_LINGUA"] != 0]
    return form.sort_values("CO_POSICAO").reset_index(drop=True)


def measures_with_r(b: np.ndarray, target: float, seed: int) -> np.ndarray:
    """Integer measures 0–24 whose Pearson r with ``b`` is ``target`` within 1e-4: a normal
    draw with that correlation, rounded, then random moves of one unit from one item to
    another, kept when they bring r closer."""
    rng = np.random.default_rng(seed)
    z = (b - b.mean()) / b.std()
    noise = rng.normal(size=b.size)
    noise -= (noise @ z) / (z @ z) * z
    noise /= noise.std()
    m = np.clip(np.round(12 + 5 * (target * z + np.sqrt(1 - target**2) * noise)), 0, 24)

    def gap(values: np.ndarray) -> float:
        return abs(float(np.corrcoef(values, b)[0, 1]) - target)

    for _ in range(200_000):
        if gap(m) < 1e-4:
            assert stats.pearsonr(m, b).statistic == pytest.approx(target, abs=1e-4)
            return m.astype(int)
        i, j = rng.integers(b.size, size=2)
        trial = m.copy()
        trial[i] += 1
        trial[j] -= rng.integers(0, 2)  # a single step or a move between two items
        if trial.max() <= 24 and trial.min() >= 0 and gap(trial) < gap(m):
            m = trial
    raise AssertionError("no measures found")


def pattern_for(key: str, correct_at: list[int]) -> str:
    """120 letters: under each order, the key when fewer than ``correct_at[p]`` of the orders
    so far showed it at position p, else a wrong option (its letter) or no letter (X)."""
    seen = [0] * 5
    letters = []
    for i, order in enumerate(ORDERS):
        p = order.index(key)
        if seen[p] < correct_at[p]:
            letters.append(key)
        else:
            letters.append("X" if i % 7 == 0 else next(x for x in order if x != key))
        seen[p] += 1
    return "".join(letters)


def write_file(folder, area: str, items: pd.DataFrame, measures: dict[int, int]) -> tuple:
    """The experiment's file of one booklet, and per CO_POSICAO the counts it was built with
    and the pattern written."""
    rows, built = [], {}
    first = 5 if area == "LC" else 0  # LC's rows start after the five English items
    for index, item in items.iterrows():
        key = item["TX_GABARITO"]
        if key not in tuple("ABCDE"):
            pattern = "V"
        else:
            m = measures[index]
            # Most at the first position, fewest at the second: max − min = m.
            correct_at = [24, 24 - m, 24 - m // 2, 24 - m // 3, 24]
            pattern = pattern_for(key, correct_at)
            built[int(item["CO_POSICAO"])] = (correct_at, pattern)
        rows.append({"MODEL": MODEL, "TEMPERATURE": 0.6, "QUESTION": first + index,
                     "ENEM_EXAM": f"ENEM_2022_{area}_CO_PROVA_{BOOKLETS[area]}",
                     "LANGUAGE": "pt-br", "SEED": 1, "MODEL_RESPONSE_PATTERN": pattern,
                     "CORRECT_ANSWER": key if key in tuple("ABCDE") else "anulada"})
    path = folder / f"shuffle_experiment_ENEM_2022_{area}_CO_PROVA_{BOOKLETS[area]}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path, built


@pytest.fixture(scope="module")
def experiment(tmp_path_factory, real_items_db, real_data):
    """A copy of the real 2022 items with the four files imported (through ``auto``), and
    per area the counts the files were built with (by CO_POSICAO)."""
    folder = tmp_path_factory.mktemp("key_position")
    db = folder / "store.duckdb"
    copy_store(real_items_db, db)
    built = {}
    for seed, area in enumerate(BOOKLETS):
        items = booklet_items(real_data, area)
        with_b = items["NU_PARAM_B"].notna() & items["TX_GABARITO"].isin(list("ABCDE"))
        m = measures_with_r(items.loc[with_b, "NU_PARAM_B"].to_numpy(float), PAPER_R[area],
                            seed)
        measures = dict.fromkeys(items.index, 12) | dict(zip(items.index[with_b], m,
                                                             strict=True))
        path, built[area] = write_file(folder, area, items, measures)
        assert main(["--db", str(db), "import-results", str(path)]) == 0
    return db, built


def test_the_orders_are_python_permutation_order():
    assert OPTION_ORDERS == tuple(ORDERS) and len(set(OPTION_ORDERS)) == 120
    assert OPTION_ORDERS[0] == "ABCDE" and OPTION_ORDERS[1] == "ABCED"


def test_uniformity_is_max_minus_min_on_a_balanced_design():
    shown = np.full((3, 5), 24.0)
    right = np.array([[24, 20, 18, 24, 23], [0, 0, 0, 0, 0], [5, 5, 5, 5, 5]], float)
    np.testing.assert_array_equal(key_position_uniformity(shown, right), [6, 0, 0])
    # Unequal exposure (a 30-shuffle run): the counts do not compare.
    uneven = np.array([[7, 5, 6, 6, 6]], float)
    assert np.isnan(key_position_uniformity(uneven, np.zeros((1, 5)))[0])


@pytest.mark.parametrize("area", list(BOOKLETS))
def test_the_table_reproduces_the_papers_correlation(experiment, area, capsys, real_data):
    db, built = experiment
    capsys.readouterr()
    assert main(["--db", str(db), "items", "--year", "2022", "--area", area,
                 "--table", "key-position"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    items = booklet_items(real_data, area)
    counted = items["NU_PARAM_B"].notna() & items["TX_GABARITO"].isin(list("ABCDE"))
    assert out[-1].startswith(f"uniformity vs difficulty: r = {PAPER_R[area]:.3f} (p = ")
    assert out[-1].endswith(f", n = {int(counted.sum())} items)")
    table = pd.read_csv(io.StringIO("\n".join(out[:-1])))
    assert len(table) == len(built[area])  # the voided item has no row
    for row in table.itertuples():
        form_row = items[items["CO_ITEM"] == row.item_id].iloc[0]
        expected, pattern = built[area][int(form_row["CO_POSICAO"])]
        assert [row.correct_A, row.correct_B, row.correct_C, row.correct_D,
                row.correct_E] == expected
        assert row.answers == 120 - pattern.count("X")  # an answer without a letter is unscored
        assert row.uniformity == max(expected) - min(expected)
        if np.isfinite(form_row["NU_PARAM_B"]):
            assert row.b == pytest.approx(form_row["NU_PARAM_B"], abs=1e-6)


def test_the_page_offers_the_papers_measure_with_the_same_correlations(experiment, monkeypatch,
                                                                      capsys):
    """Options and traps → Key position, the paper's uniformity chosen: for each booklet's
    run, its area's panel title gives the r the command line prints, and the table lists
    it."""
    db, _ = experiment
    monkeypatch.setenv("ENEM_DB", str(db))
    app = run_page(PAGE, {"year": "2022", "area": list(BOOKLETS), "section": "Key position"})
    assert_clean(app)
    assert app.segmented_control(key="options.keydep.measure").options == [
        "χ² of correct × position", "paper's uniformity"]
    app.segmented_control(key="options.keydep.measure").set_value("uniformity").run()
    assert_clean(app)
    for area, r in PAPER_R.items():
        series = f"{MODEL} · paper key-position {area} {BOOKLETS[area]} · 120 shuffles"
        app.selectbox(key="options.keypos.series").set_value(series).run()
        assert_clean(app)
        figure = next(chart for chart in charts(app)
                      if chart["layout"].get("meta", {}).get("figure") == "key-dependence")
        titles = " ".join(note["text"] for note in figure["layout"]["annotations"])
        assert f"{area_title(area)} · r = {r:.2f}," in titles
        table = next(frame.value for frame in app.dataframe
                     if list(frame.value.columns)[:3] == ["series", "area", "items"])
        row = table[table["series"] == series].iloc[0]
        assert row["area"] == area
        capsys.readouterr()
        assert main(["--db", str(db), "items", "--year", "2022", "--area", area,
                     "--table", "key-position"]) == 0
        printed = capsys.readouterr().out.strip().splitlines()[-1]
        assert printed.startswith(f"uniformity vs difficulty: r = {row['r']:.3f} (")
        assert printed.endswith(f"n = {row['items']} items)")
