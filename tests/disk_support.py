"""A small disk for tests of what a full disk does: a fresh tmpfs of a given size."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from store.connection import forget_recent_readers


@pytest.fixture
def small_disk(tmp_path, request):
    """``mount(size)``: a fresh tmpfs of ``size`` bytes, unmounted when the test ends."""
    point = tmp_path / "disk"
    point.mkdir()

    def mount(size: int) -> Path:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)],
                       check=True)
        def unmount() -> None:
            forget_recent_readers()  # the readers this process keeps hold files open there
            subprocess.run(["umount", str(point)], check=True)

        request.addfinalizer(unmount)
        return point

    return mount
