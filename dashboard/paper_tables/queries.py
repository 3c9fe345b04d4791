"""The cached store queries of the Paper tables page (see ``dashboard.queries``)."""

from __future__ import annotations

from dashboard.queries import cached_query
from store import paper_table_queries

random_baseline_patterns = cached_query(paper_table_queries.random_baseline_patterns)
random_series = cached_query(paper_table_queries.random_series)
area_item_attributes = cached_query(paper_table_queries.area_item_attributes)
min_k_accuracy = cached_query(paper_table_queries.min_k_accuracy)
