"""The launcher of the project's own processes (``workflows.background``): a detached job runs
in its own session from the project root with its output in its log, an early failure is
seen, a waited job's output and exit status come back; and no other module starts one."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from store.connection import PROJECT_ROOT
from workflows.background import (
    STARTING_SECONDS,
    failed_to_start,
    modified_at,
    run_to_end,
    start_detached,
    still_starting,
)

#: The packages and modules the project ships (tests and benchmarks start processes of their
#: own to drive it from outside).
SOURCE = ("analytics", "enem", "inference", "store", "demo", "workflows", "cli", "dashboard",
          "pages", "app.py")

#: A child that reports where and how it runs into the file named by its first argument.
REPORTING_CHILD = """
import json, os, sys
print("to stdout", flush=True)
print("to stderr", file=sys.stderr, flush=True)
with open(sys.argv[1], "w") as out:
    json.dump({"cwd": os.getcwd(), "pid": os.getpid(), "session": os.getsid(0),
               "stdin": sys.stdin.read(), "marker": os.environ.get("LAUNCHER_MARKER")}, out)
"""


def _wait_for_end(job, seconds: float = 60.0) -> int:
    code = job.wait_started(seconds)
    assert code is not None, "the child did not end"
    return code


def test_a_detached_child_runs_in_its_own_session_with_its_output_in_the_log(tmp_path):
    report, log = tmp_path / "report.json", tmp_path / "log.txt"
    job = start_detached([sys.executable, "-c", REPORTING_CHILD, str(report)], log)
    assert _wait_for_end(job) == 0 and not job.alive and job.exit_code() == 0
    seen = json.loads(report.read_text())
    assert seen["pid"] == job.pid and job.log == log
    # Its own session (start_new_session): a Ctrl-C to the caller's group does not reach it.
    assert seen["session"] == job.pid != os.getsid(0)
    assert Path(seen["cwd"]) == PROJECT_ROOT
    assert seen["stdin"] == ""
    assert seen["marker"] is None
    words = log.read_text()
    assert "to stdout" in words and "to stderr" in words


def test_the_log_keeps_earlier_attempts_and_the_environment_can_be_given(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("an earlier attempt\n")
    report = tmp_path / "report.json"
    job = start_detached([sys.executable, "-c", REPORTING_CHILD, str(report)], log,
                         cwd=tmp_path, env={**os.environ, "LAUNCHER_MARKER": "given"})
    assert _wait_for_end(job) == 0
    seen = json.loads(report.read_text())
    assert seen["marker"] == "given" and Path(seen["cwd"]) == tmp_path
    assert log.read_text().startswith("an earlier attempt\nto stdout")


def test_an_early_failure_is_seen_and_a_running_child_is_alive(tmp_path):
    failing = start_detached([sys.executable, "-c", "import sys; sys.exit('no such year')"],
                             tmp_path / "failing.txt")
    assert _wait_for_end(failing) == 1 and not failing.alive
    assert "no such year" in (tmp_path / "failing.txt").read_text()
    running = start_detached([sys.executable, "-c", "import time; time.sleep(60)"],
                             tmp_path / "running.txt")
    try:
        assert running.wait_started(0.3) is None and running.alive
        assert running.exit_code() is None
    finally:
        running.process.kill()
        running.process.wait()
    assert not running.alive


def test_a_program_that_cannot_start_is_an_error_at_once(tmp_path):
    with pytest.raises(FileNotFoundError):
        start_detached([str(tmp_path / "no-such-program")], tmp_path / "log.txt")


def test_a_waited_job_returns_its_output_and_status_and_is_held_to_its_time(tmp_path):
    script = "import os, sys; print(os.getcwd()); print('broke', file=sys.stderr); sys.exit(2)"
    done = run_to_end([sys.executable, "-c", script], timeout=60)
    assert done.returncode == 2
    assert Path(done.stdout.strip()) == PROJECT_ROOT and done.stderr.strip() == "broke"
    with pytest.raises(subprocess.TimeoutExpired):
        run_to_end([sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5)


def test_the_starting_window(tmp_path):
    now = time.time()
    assert still_starting(now) and not failed_to_start(now)
    long_ago = now - STARTING_SECONDS - 1
    assert not still_starting(long_ago) and failed_to_start(long_ago)
    # Unknown (no file written at the launch): never starting, failed once nothing is alive.
    assert not still_starting(None) and failed_to_start(None)
    assert modified_at(tmp_path / "missing") is None
    (tmp_path / "log.txt").write_text("")
    assert still_starting(modified_at(tmp_path / "log.txt"))


def test_only_the_launcher_starts_detached_processes():
    """Every ``subprocess.Popen`` (and ``start_new_session``) of the source packages is in
    ``workflows/background.py``: the project has one way to start a detached job."""
    launcher = PROJECT_ROOT / "workflows" / "background.py"
    files = [path for name in SOURCE
             for path in ([PROJECT_ROOT / name] if name.endswith(".py")
                          else sorted((PROJECT_ROOT / name).rglob("*.py")))]
    assert launcher in files and PROJECT_ROOT / "app.py" in files
    spawners = []
    for path in files:
        if path == launcher:
            continue
        relative = str(path.relative_to(PROJECT_ROOT))
        for node in ast.walk(ast.parse(path.read_text(), relative)):
            if isinstance(node, ast.Attribute) and node.attr == "Popen":
                spawners.append(f"{relative}:{node.lineno}")
            elif isinstance(node, ast.keyword) and node.arg == "start_new_session":
                spawners.append(f"{relative}:{node.value.lineno}")
    assert spawners == []
