"""dashboard.threads: a page's pieces two at a time, in order, errors raised."""

from __future__ import annotations

import threading
import time

import pytest

from dashboard.threads import WORKER_THREADS, map_in_threads


def test_results_come_back_in_the_order_of_the_items():
    # Later items finish first: the results still follow the items.
    def slow_square(x: int) -> int:
        time.sleep(0.01 * (5 - x))
        return x * x

    assert map_in_threads(slow_square, range(5)) == [0, 1, 4, 9, 16]


def test_pieces_run_in_two_threads_at_once():
    running, most = [0], [0]
    lock = threading.Lock()

    def piece(_: int) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    map_in_threads(piece, range(6))
    assert most[0] == WORKER_THREADS == 2


def test_an_error_in_a_piece_is_raised_to_the_page():
    def piece(x: int) -> int:
        if x == 3:
            raise ValueError("no panel for 3")
        return x

    with pytest.raises(ValueError, match="no panel for 3"):
        map_in_threads(piece, range(5))
