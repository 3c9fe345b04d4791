"""The dashboard's run queue: a launched run waits, queued and cancellable, while the slots are
held, starts by itself when one frees, and a full queue refuses further launches."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from inference.plan import RANDOM_BASELINE, RunSpec
from tests.runs_page_support import wait_for
from workflows.runs import service
from workflows.runs.slots import try_slot


def spec(area: str, seed: int = 0) -> RunSpec:
    return RunSpec(model=RANDOM_BASELINE, backend="random", year=2023, areas=(area,),
                   languages=("pt",), shots=(0,), n_shuffles=2, seed=seed)


def state_of(runs_dir, run_id: str) -> service.RunProgress:
    [run] = [run for run in service.list_runs(runs_dir) if run.run_id == run_id]
    return run


def test_a_launch_waits_for_a_free_slot_then_runs(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    held = try_slot(runs_dir, 1)  # the one slot is taken, as by a working run
    assert held is not None and try_slot(runs_dir, 1) is None
    run_id = service.start_in_background(spec("MT"), demo_db, runs_dir, slots=1).run_id
    wait_for(lambda: state_of(runs_dir, run_id).state == "queued")
    queued = state_of(runs_dir, run_id)
    assert queued.alive and not queued.removable
    runs = service.list_runs(runs_dir)
    assert service.queued_runs(runs) == [run_id] and service.working_runs(runs) == []
    time.sleep(2)  # it keeps waiting while the slot is held
    assert state_of(runs_dir, run_id).state == "queued"
    held.release()
    wait_for(lambda: state_of(runs_dir, run_id).state == "finished"
             and not state_of(runs_dir, run_id).alive)
    assert try_slot(runs_dir, 1) is not None, "the finished run gave its slot back"


def test_a_queued_run_is_cancelled_at_once(demo_db, tmp_path):
    runs_dir = tmp_path / "runs"
    held = try_slot(runs_dir, 1)
    run_id = service.start_in_background(spec("CN"), demo_db, runs_dir, slots=1).run_id
    wait_for(lambda: state_of(runs_dir, run_id).state == "queued")
    service.cancel(run_id, runs_dir)
    wait_for(lambda: not state_of(runs_dir, run_id).alive, timeout=30)
    cancelled = state_of(runs_dir, run_id)
    assert cancelled.state == "cancelled" and cancelled.removable
    held.release()


def test_a_full_queue_refuses_the_next_launch(demo_db, tmp_path, monkeypatch):
    runs_dir = tmp_path / "runs"
    monkeypatch.setattr(service, "MAX_QUEUED", 1)
    held = try_slot(runs_dir, 1)
    service.check_queue(runs_dir)  # empty queue: a launch may wait
    first = service.start_in_background(spec("CH"), demo_db, runs_dir, slots=1).run_id
    wait_for(lambda: state_of(runs_dir, first).state == "queued")
    with pytest.raises(service.TooManyRuns, match="1 run\\(s\\) already wait for a slot"):
        service.check_queue(runs_dir)
    service.cancel(first, runs_dir)
    wait_for(lambda: not state_of(runs_dir, first).alive, timeout=30)
    service.check_queue(runs_dir)
    held.release()


def test_a_slot_is_freed_when_its_holder_dies(tmp_path):
    script = ("import time; from workflows.runs.slots import try_slot; "
              f"s = try_slot({str(tmp_path)!r}, 1); print(s.index, flush=True); time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "0"
    assert try_slot(tmp_path, 1) is None
    holder.kill()
    holder.wait()
    assert try_slot(tmp_path, 1) is not None
