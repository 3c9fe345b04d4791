"""INEP's formats and conventions: areas, item files, booklet forms, response strings, scoring.

Everything here turns INEP's files into the arrays ``analytics`` scores and back into scores:
the items file (``items``), the microdata layouts (``microdata``), response strings
(``responses``), the official scoring recipe (``scoring``), scoring Arrow batches of candidates
(``score_batches``), per-item human statistics (``item_statistics``) and ``score-patterns``
(``patterns``). Files are parsed with DuckDB's in-memory CSV reader (``csvfiles``); nothing here
opens the project's database. A new INEP convention (a year's quirk, a new file layout) goes here.
"""
