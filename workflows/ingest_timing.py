"""Where an ingest's time goes: wall-clock and CPU seconds per phase (printed by
``bench.ingest``, so whoever speeds the ingest up next sees what to cut).

CPU seconds of the ingesting process count every thread of it (DuckDB's included). The scoring
workers report the CPU seconds of each of their steps, summed over the areas; their steps run
while the ingesting process stores the previous area's rows, so wall-clock seconds of the
"scoring" phase cover both. (With one worker the steps run in the ingesting process and are
counted in both.) A phase whose name starts with spaces is part of the one above it and is not
added again to the totals.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class PhaseTimes:
    """Seconds per phase of the ingesting process (``wall``, ``cpu``) and CPU seconds per step
    of the scoring workers (``worker_cpu``), each in the order first met."""

    wall: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    worker_cpu: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the wall-clock and CPU seconds of the block to phase ``name`` (listed from when
        it starts, so a phase inside it, named with leading spaces, is listed after it)."""
        self.add(name, 0.0, 0.0)
        wall, cpu = time.monotonic(), time.process_time()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - wall, time.process_time() - cpu)

    def add(self, name: str, wall: float, cpu: float) -> None:
        """Add seconds to phase ``name`` of the ingesting process."""
        self.wall[name] = self.wall.get(name, 0.0) + wall
        self.cpu[name] = self.cpu.get(name, 0.0) + cpu

    def add_worker(self, steps: dict[str, float]) -> None:
        """Add a worker's CPU seconds per step (one area's)."""
        for name, seconds in steps.items():
            self.worker_cpu[name] = self.worker_cpu.get(name, 0.0) + seconds

    def lines(self) -> list[str]:
        """A table of the phases, then the workers' steps, each with its share of all the CPU
        seconds counted."""
        own = [name for name in self.wall if not name.startswith(" ")]
        total = sum(self.cpu[name] for name in own) + sum(self.worker_cpu.values())
        share = (lambda s: f"{100 * s / total:5.1f}%") if total else (lambda s: "    –")
        out = [f"  {'ingesting process':50s} {'wall s':>7s} {'CPU s':>7s} {'CPU share':>9s}"]
        for name, wall in self.wall.items():
            cpu = self.cpu[name]
            out.append(f"  {name:50s} {wall:7.2f} {cpu:7.2f} {share(cpu):>9s}")
        if self.worker_cpu:
            out.append(f"  {'scoring workers, summed over areas':50s} {'':>7s} {'CPU s':>7s}")
            for name, cpu in self.worker_cpu.items():
                out.append(f"  {name:50s} {'':7s} {cpu:7.2f} {share(cpu):>9s}")
        out.append(f"  {'all phases':50s} {sum(self.wall[name] for name in own):7.2f} "
                   f"{total:7.2f}")
        return out
