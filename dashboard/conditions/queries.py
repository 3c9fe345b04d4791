"""The Conditions page's store query, cached (see ``dashboard.queries``)."""

from __future__ import annotations

from dashboard.queries import cached_query
from store import condition_queries

condition_patterns = cached_query(condition_queries.condition_patterns)
condition_choices = cached_query(condition_queries.condition_choices)
