"""The Options and traps page's store queries, one cached function each (see
:func:`dashboard.queries.cached_query`), named as in :mod:`store.option_queries`."""

from __future__ import annotations

from dashboard.queries import cached_query
from store import option_queries

human_option_counts = cached_query(option_queries.human_option_counts)
human_option_theta_counts = cached_query(option_queries.human_option_theta_counts)
model_option_answers = cached_query(option_queries.model_option_answers)
question_lengths = cached_query(option_queries.question_lengths)
