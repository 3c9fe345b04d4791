"""The Years page's store queries, cached (see ``dashboard.queries``)."""

from __future__ import annotations

from dashboard.queries import cached_query
from store import trend_queries

year_humans = cached_query(trend_queries.year_humans)
year_items = cached_query(trend_queries.year_items)
year_patterns = cached_query(trend_queries.year_patterns)
band_answers = cached_query(trend_queries.band_answers)
