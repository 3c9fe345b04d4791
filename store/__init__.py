"""The DuckDB store: schema, connections, ingest of INEP files and the queries pages use."""
