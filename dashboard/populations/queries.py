"""The Populations page's store queries, one cached function each (see ``dashboard.queries``)."""

from __future__ import annotations

from dashboard.queries import cached_query
from store import population_queries

population_kinds = cached_query(population_queries.population_kinds)
population_rows = cached_query(population_queries.population_rows)
model_patterns = cached_query(population_queries.model_patterns)
