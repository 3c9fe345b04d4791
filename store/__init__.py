"""The DuckDB store: the schema, connections and every SQL statement of the project.

``schema`` creates the tables; ``connection`` finds and opens the file; ``year_tables`` and
``histograms`` are the SQL of ingesting a year; ``model_runs`` reads exams for runs and publishes
them; ``question_texts`` stores question texts; ``queries`` and ``dashboard_queries`` are the
read-only queries of the command line and the pages. Values are always bound parameters. A new
query goes in ``dashboard_queries`` (pages) or ``queries`` (shared), as a function taking an open
connection and plain values and returning a DataFrame.
"""
