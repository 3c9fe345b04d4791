"""The sidebar filters every page shares, kept across pages and mirrored in the URL.

How the state works:

- ``app.py`` draws the sidebar once per script run, before the page
  (:func:`dashboard.state.frame.run_page`); the page then gets the selection from
  :func:`dashboard.state.frame.open_page` (the Filters computed in this same run, handed over in
  session state), so no page draws it again.
- Each filter has a *persistent* session key (``filter.<name>``) and a *widget* key
  (``sidebar.<name>``). Before a widget is drawn its key is seeded from the persistent value
  (checked against the options this database offers, which change with the year), and after it
  is drawn the persistent value is updated from it.
- On the first run of a browser session the persistent values are read from the URL's query
  parameters; after every run the current filters are written back to the URL, so copying the
  address shares the view (e.g. ``?year=2023&area=CN&area=MT&lang=en&shots=4&run=<run id>``;
  ``shots=published`` is the setting of runs imported without a shot count).

The modules, one job each:

- :mod:`~dashboard.state.filters`: the :class:`Filters` value (what was selected, and what
  follows from it without a query); no Streamlit, no database.
- :mod:`~dashboard.state.url`: the table of shared filters (query parameter, widget key, parse,
  format, default) that drives reading the URL once and writing it back.
- :mod:`~dashboard.state.sidebar`: the widgets, drawn once per run into a Filters.
- :mod:`~dashboard.state.selection`: the queries that take a Filters.
- :mod:`~dashboard.state.frame`: the page frame (``run_page``, ``open_page``,
  ``require_database``) and the notices and empty states pages show.
"""
