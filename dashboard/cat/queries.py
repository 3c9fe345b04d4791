"""The store queries of the Adaptive testing page, cached (``dashboard.queries.cached_query``)."""

from __future__ import annotations

from dashboard.queries import cached_query
from store import cat_queries

area_bank_items = cached_query(cat_queries.area_bank_items)
cat_paths = cached_query(cat_queries.cat_paths)
full_exam_scores = cached_query(cat_queries.full_exam_scores)
area_item_icc = cached_query(cat_queries.area_item_icc)
