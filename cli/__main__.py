"""``python -m cli`` is the same as ``enem-llm``."""

from cli.main import run

# Guarded so that a process started to import this module (a worker) does not run the command.
if __name__ == "__main__":
    run()
