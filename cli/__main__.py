"""``python -m cli`` is the same as ``enem-llm``."""

from cli.main import run

run()
