"""Orchestration: the things a user asks for, each composed from the layers below.

Ingest a year (``ingest``), build the demo (``demo_build``), execute a model run
(``run_execution``) and manage runs (``runs``, the service the command line and the Runs page
share), import and export results (``results_io``) and question texts (``question_import``).
A new workflow goes here; the command line and the dashboard call it, never the other way.
"""
