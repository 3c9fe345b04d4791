"""The URL-state table of the shared sidebar (``dashboard.state.url``), without a browser.

The AppTest round trips (tests/test_pages.py) check that a shared address opens the same view;
these check the table itself: which parameters it reads and writes, in which order, that each
written value parses back to the widget value it came from, and that defaults stay out of the
address (except the year, prompt language and shots, which every address names).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.state import url
from dashboard.state.url import ALL_BOOKLETS, FIELDS, URL_KEYS, StateField
from enem.areas import AREAS
from store.model_sql import UNCOUNTED_SHOTS

FIELD = {field.name: field for field in FIELDS}
ROOT = Path(__file__).resolve().parent.parent


def test_the_address_names_the_same_parameters_in_the_same_order():
    assert URL_KEYS == ("year", "area", "booklet", "lang", "shots", "family", "tuning", "model",
                        "run", "pool", "group", "reproduced", "blank")
    # The camera button's format is kept across pages but not put in the address.
    assert not FIELD["image"].in_url and FIELD["image"].default == "png"


def test_every_field_keeps_its_session_keys():
    for field in FIELDS:
        assert field.widget_key == f"sidebar.{field.name}"
        assert field.persistent_key == f"filter.{field.name}"


@pytest.mark.parametrize(("name", "value"), [
    ("year", 2023), ("area", ["CN", "MT"]), ("booklet", 1234), ("lang", "en"),
    ("lang", "pt"), ("shots", 0), ("shots", 4), ("shots", UNCOUNTED_SHOTS),
    ("family", ["llama2", "qwen"]), ("tuning", "instruct"), ("tuning", "base"),
    ("pool", True), ("group", "state:SP"), ("group", "school_type:3"),
    ("reproduced", True), ("blank", True),
])
def test_a_written_value_parses_back_to_the_widget_value(name: str, value):
    field = FIELD[name]
    written = field.format(value)
    assert written and all(isinstance(text, str) for text in written)
    assert field.parse(written) == value


def test_shots_without_a_count_are_written_by_name():
    assert FIELD["shots"].format(UNCOUNTED_SHOTS) == ["published"]


def test_lower_case_areas_in_an_address_open_their_area():
    assert FIELD["area"].parse(["cn", "mt"]) == ["CN", "MT"]


@pytest.mark.parametrize("name", ["booklet", "family", "tuning", "model", "pool", "group",
                                  "reproduced", "blank"])
def test_defaults_stay_out_of_the_address(name: str):
    assert FIELD[name].format(FIELD[name].default) == []


def test_every_area_or_none_stays_out_of_the_address():
    assert FIELD["area"].format(list(AREAS)) == []
    assert FIELD["area"].format([]) == []
    assert FIELD["booklet"].default == ALL_BOOKLETS


def test_the_year_language_and_shots_are_always_written():
    assert FIELD["year"].default is None and FIELD["shots"].default is None
    assert FIELD["lang"].format(FIELD["lang"].default) == [FIELD["lang"].default]


def test_runs_are_read_by_label_but_written_by_id(monkeypatch):
    # Old links name runs by label (model=): read, never written back; the address names the
    # run picker's choice by run id (run=), written from the picker's kept labels.
    assert FIELD["model"].format(["a run label"]) == []
    assert FIELD["run"].written_from == "model"
    monkeypatch.setattr(url, "run_ids", lambda labels: [f"id of {label}" for label in labels])
    assert FIELD["run"].format(["a", "b"]) == ["id of a", "id of b"]
    assert FIELD["run"].format(None) == []


def test_bad_values_raise_what_seeding_falls_back_on():
    # seed() catches TypeError/ValueError and uses the default instead.
    for name, bad in [("year", ["twenty"]), ("booklet", ["x"])]:
        with pytest.raises((TypeError, ValueError)):
            FIELD[name].parse(bad)


def test_a_field_is_a_frozen_row():
    field = StateField("x", list, list)
    with pytest.raises(AttributeError):
        field.name = "y"  # type: ignore[misc]


def test_the_filters_value_needs_neither_streamlit_nor_the_database():
    # A fresh interpreter: this test session has long imported both.
    code = ("import sys, dashboard.state.filters; "
            "print(sorted(m for m in ('streamlit', 'dashboard.queries') if m in sys.modules))")
    found = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.strip()
    assert found == "[]"
