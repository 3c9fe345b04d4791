"""The command line (``enem-llm``): one sub-command per workflow, each a thin wrapper.

A new command goes in ``cli.main`` (data commands) or ``cli.run_commands`` (model runs) and calls
a function of ``workflows``; argument parsing and printing are all it does.
"""
