"""The dashboard's shared pieces; ``app.py`` is the frame and ``pages/`` holds one file per view.

How a page works: ``app.py`` picks the page (:mod:`dashboard.navigation`), draws the sidebar
filters once (:mod:`dashboard.state`, mirrored in the URL) and runs the page, which reads the
selection with ``open_page(title)``. The page fetches rows through the cached query functions
of :mod:`dashboard.queries` (one per query in ``store/``; no SQL here), gets any descriptive
statistic from :mod:`dashboard.summaries`, which calls :mod:`analytics` for the psychometrics
(pages and this package compute none themselves), and draws with :mod:`dashboard.figures` and
:mod:`dashboard.palette` (the curve around a model's points comes from :mod:`analytics.contours`).

Where new things go:

- a new page: a file under ``pages/`` plus one line in ``workflows.views.VIEWS``;
- a new query: a function in the ``store/*_queries.py`` module of its feature (SQL lives only
  in ``store``), then its cached twin of the same name in ``dashboard/queries.py``;
- a new statistic: the formula in ``analytics``, its on-screen summary in
  ``dashboard/summaries.py``.
"""
