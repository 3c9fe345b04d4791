"""The DuckDB store: the schema, connections and every SQL statement of the project.

``schema`` creates the tables; ``connection`` finds and opens the file; ``year_tables`` and
``histograms`` are the SQL of ingesting a year; ``model_runs`` reads exams for runs and publishes
them; ``question_texts`` stores question texts; ``queries`` and the ``*_queries`` modules, one
per feature (``catalogue_queries`` what is loaded, ``human_queries``, ``item_queries``,
``model_queries``, ``audit_queries``, ``data_queries``, ``option_queries``, …), are the
read-only queries of the command line and the pages, the runs selected through the SQL of
``model_sql``. Values are always bound parameters. A new query goes in its feature's module, as
a function taking an open connection and plain values and returning a DataFrame.
"""
