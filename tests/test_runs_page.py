"""The Runs page: the command it shows runs as printed, a launch says so in words, the run
tables follow a run until it ends (under AppTest and in a real browser), and a run that ended
without finishing can be removed from the page."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cli.main import build_parser
from cli.run_commands import spec_from_args
from inference.plan import RunSpec
from tests.browser_support import BROWSER_ARGS, CHROMIUM, grant_operator_cookie
from tests.browser_support import require_browser as _require_browser
from tests.browser_support import serving as _serving
from tests.page_support import assert_clean
from tests.runs_page_support import labelled, open_runs, wait_for
from workflows.runs.folder import RunFolder
from workflows.runs.service import list_runs, project_command

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120
RUNS = "pages/Runs.py"
SCREENSHOTS = ROOT / "test-artifacts" / "browser"

#: The Runs page launches for the operator only (AppTest has no browser request).
pytestmark = pytest.mark.usefixtures("as_operator")


def test_the_command_shown_is_the_full_runnable_command_of_the_form(runs_page_db):
    app = open_runs()
    labelled(app.main.selectbox, "Backend").set_value("random")
    labelled(app.main.multiselect, "Areas").set_value(["MT"])
    labelled(app.main.number_input, "Option shuffles per item").set_value(2)
    labelled(app.main.text_input, "Model family (for grouping)").set_value("base line's")
    labelled(app.button, "Launch").click().run()  # a form's values count once submitted
    assert_clean(app)
    printed = app.code[0].value
    words = shlex.split(printed)
    prefix = project_command()
    assert words[:len(prefix)] == prefix and Path(words[0]).is_absolute()
    assert words[len(prefix):len(prefix) + 3] == ["--db", str(runs_page_db), "run"]
    spec = spec_from_args(build_parser().parse_args(words[len(prefix):]))
    assert spec == RunSpec(model="random-baseline", backend="random", year=2023, areas=("MT",),
                           n_shuffles=2, family="base line's")
    [launched] = list_runs(runs_page_db.parent / "runs")
    assert launched.run_id == spec.run_id
    wait_for(lambda: not list_runs(runs_page_db.parent / "runs")[0].alive
             and list_runs(runs_page_db.parent / "runs")[0].state == "finished")
    # Pasted into a shell from another folder, it makes (here: publishes again) that very run.
    done = subprocess.run(["bash", "-c", printed + " --quiet"], cwd=runs_page_db.parent.parent,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"run {spec.run_id} finished")


def test_a_launch_is_reported_in_words_and_the_tables_follow_it_to_the_end(runs_page_db):
    app = open_runs()
    assert not app.session_state["runs.active"]
    labelled(app.main.selectbox, "Backend").set_value("random")
    labelled(app.main.multiselect, "Areas").set_value(["MT"])
    labelled(app.main.number_input, "Option shuffles per item").set_value(2)
    labelled(app.button, "Launch").click().run()
    assert_clean(app)
    [run] = list_runs(runs_page_db.parent / "runs")
    [started] = [s.value for s in app.success]
    assert started.startswith(f"Run **{run.run_id}** started (process ")
    assert "Runs on this machine" in started and "sidebar's Runs" in started
    assert "{" not in started and '"run_id"' not in started
    # While it works the run tables refresh themselves.
    assert app.session_state["runs.active"]
    wait_for(lambda: list_runs(runs_page_db.parent / "runs")[0].state == "finished"
             and not list_runs(runs_page_db.parent / "runs")[0].alive)
    app.run()
    assert_clean(app)
    assert any(f"**{run.run_id}** — finished" in m.value for m in app.markdown)
    assert run.run_id in set(app.dataframe[0].value["run_id"])
    assert not app.session_state["runs.active"]
    # The start message stays readable on the reruns that follow.
    assert app.success[0].value == started


def test_a_failed_run_can_be_removed_from_the_page_a_finished_one_cannot(runs_page_db):
    runs_dir = runs_page_db.parent / "runs"
    failed = RunSpec(model="random-baseline", backend="random", year=2023, areas=("CN",),
                     n_shuffles=3)
    folder = RunFolder(runs_dir / failed.run_id)
    folder.write_json("spec.json", failed.to_dict())
    folder.update_status(status="failed", units_done=4, units_total=45,
                         error="ScoringError: the backend went away")
    finished = subprocess.run(
        [*project_command(), "--db", str(runs_page_db), "run", "--backend", "random", "--year",
         "2023", "--areas", "MT", "--shuffles", "2", "--quiet"], capture_output=True, text=True,
        check=True, timeout=300).stdout.split()[1]
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    app.switch_page(RUNS).run()
    assert not app.exception, [e.value for e in app.exception]
    assert [e.value for e in app.error] == ["ScoringError: the backend went away"]
    keys = {button.key for button in app.button}
    assert f"remove-{failed.run_id}" in keys
    assert f"remove-{finished}" not in keys and f"cancel-{finished}" not in keys
    app.button(key=f"remove-{failed.run_id}").click().run()
    assert_clean(app)  # the failed run, and its error, are gone
    assert f"removed run {failed.run_id}: its folder {folder.root}" in " ".join(
        s.value for s in app.success)
    assert not folder.root.exists()
    assert [run.run_id for run in list_runs(runs_dir)] == [finished]
    app.run()
    assert f"remove-{failed.run_id}" not in {button.key for button in app.button}


def test_in_a_browser_the_runs_table_refreshes_when_a_run_ends(runs_page_db):
    """Launched from the form, a run appears in the database table when it ends, with no
    reload and no click: the page refreshes itself while the run works."""
    sync_playwright = _require_browser()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    runs_dir = runs_page_db.parent / "runs"
    with _serving(runs_page_db, "streamlit-runs-page.log") as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 2400})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            grant_operator_cookie(page, base)
            page.goto(f"{base}/Runs", wait_until="domcontentloaded")
            page.get_by_role("heading", name="Model runs", level=1).wait_for(timeout=60_000)
            expected = RunSpec(model="random-baseline", backend="random", year=2023,
                               areas=("MT",), n_shuffles=2).run_id
            # The database table, drawn (the demo's own runs in it), without this run yet.
            page.locator("[data-testid='stDataFrame'] [role='gridcell']").first.wait_for(
                state="attached", timeout=60_000)
            wait_for(lambda: "random-baseline-random-2023-" in _grid_text(page), timeout=30)
            assert expected not in _grid_text(page)
            # The form: backend random, areas MT only, 2 shuffles.
            form = page.locator("[data-testid='stMain']")
            form.get_by_role("combobox", name="Backend").click()
            page.get_by_role("option", name="random", exact=True).click()
            for area in ("CN", "CH", "LC"):
                form.get_by_role("button", name=f"Remove {area}", exact=True).click()
            form.get_by_role("spinbutton", name="Option shuffles per item").fill("2")
            page.get_by_role("button", name="Launch").click()
            page.get_by_text(f"{expected} started (process").wait_for(timeout=60_000)
            wait_for(lambda: bool(list_runs(runs_dir)))
            [run] = list_runs(runs_dir)
            assert run.run_id == expected
            # No reload, no click from here on: the run ends, the tables follow.
            page.get_by_text(f"{run.run_id} — finished").wait_for(timeout=120_000)
            wait_for(lambda: run.run_id in _grid_text(page), timeout=30)
            page.screenshot(path=str(SCREENSHOTS / "runs_after_run_ended.png"), full_page=True)
            assert not errors, errors
        finally:
            browser.close()


def _grid_text(page) -> str:
    """The text of the data grids' cells (glide's accessible table mirrors the canvas)."""
    return " ".join(page.locator("[data-testid='stDataFrame'] [role='gridcell']").all_inner_texts())
