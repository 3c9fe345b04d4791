"""workflows.ingest_timing: the phase table bench.ingest prints adds each second once."""

from __future__ import annotations

from workflows.ingest_timing import PhaseTimes


def test_nested_phases_are_listed_but_not_counted_twice():
    times = PhaseTimes()
    times.add("load", 3.0, 5.0)
    times.add("scoring", 2.0, 1.0)
    times.add("  of which storing", 1.5, 0.75)
    times.add("scoring", 1.0, 1.0)
    times.add_worker({"patterns": 1.0, "populations": 1.0})  # one area
    times.add_worker({"patterns": 1.0})  # another
    lines = times.lines()
    rows = {line[:52].strip(): line[52:].split() for line in lines[1:]}
    assert rows["load"] == ["3.00", "5.00", "50.0%"]  # of 5 + 2 + 3 = 10 CPU seconds
    assert rows["scoring"] == ["3.00", "2.00", "20.0%"]
    assert rows["patterns"] == ["2.00", "20.0%"]
    assert rows["of which storing"] == ["1.50", "0.75", "7.5%"]
    assert rows["populations"] == ["1.00", "10.0%"]
    assert rows["all phases"] == ["6.00", "10.00"]
    assert [line[:52].strip() for line in lines].index("of which storing") == 3


def test_a_phase_inside_another_is_listed_after_it():
    times = PhaseTimes()
    with times.phase("scoring"), times.phase("  of which storing"):
        pass
    assert list(times.wall) == ["scoring", "  of which storing"]
    assert times.wall["scoring"] >= times.wall["  of which storing"] >= 0.0
