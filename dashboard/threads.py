"""A page's independent pieces (one per area, say) computed two at a time.

DuckDB runs a query without holding Python's interpreter lock, and so do numpy's larger
array operations, so two areas' reads and sums overlap on two cores: Options and traps' four
areas' queries 0.29 → 0.16 s on a ten-year store, and four areas' Response patterns panels
(queries and the humans' item fit) 0.95 → 0.75 s there before that page came to show one
area at a time (four threads were no faster than two). Each
worker carries the page run's Streamlit context, so cached queries (``st.cache_data``) it
calls behave as in the page itself. Workers compute only: elements are drawn by the page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

T = TypeVar("T")
R = TypeVar("R")

#: Pieces computed at once.
WORKER_THREADS = 2


def map_in_threads(function: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """``[function(item) for item in items]``, :data:`WORKER_THREADS` items at a time, in
    order; an exception in one is raised here."""
    context = get_script_run_ctx(suppress_warning=True)

    def carry_context() -> None:
        if context is not None:
            add_script_run_ctx(None, context)

    with ThreadPoolExecutor(max_workers=WORKER_THREADS, initializer=carry_context) as pool:
        return list(pool.map(function, items))
