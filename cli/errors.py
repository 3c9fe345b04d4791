"""How ``enem-llm`` ends when it cannot do what was asked: one ``error: …`` line on stderr and a
non-zero exit code, never a traceback.

Exit codes: 2 bad input (flags, files or values a command cannot use), 3 an ingest refused, 1 a
failure while working (a backend that cannot score, a run another process holds, the store),
130 stopped by Ctrl-C or SIGTERM.
An exception of a kind not listed in ``EXIT_CODES`` is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse

import duckdb

from enem.csvfiles import UnusableFileError
from inference.backends import BackendSettingsError, ScoringError
from store.migration import StoreMigrationError
from workflows.ingest import IngestError
from workflows.runs.folder import RunBusyError
from workflows.runs.service import RunNotRemovable, RunNotRunning

#: The exit code of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
INTERRUPTED = 130


class UsageError(ValueError):
    """Bad flags or values, found by the parser or by a command."""


#: (exception types, exit code); the first entry that matches an error gives its code.
EXIT_CODES: tuple[tuple[tuple[type[BaseException], ...], int], ...] = (
    ((UsageError, UnusableFileError, BackendSettingsError, FileNotFoundError,
      NotADirectoryError, IsADirectoryError), 2),
    ((IngestError,), 3),
    ((StoreMigrationError,), 1),
    ((ScoringError, RunBusyError, RunNotRunning, RunNotRemovable, duckdb.Error,
      OSError), 1),
    ((ValueError,), 2),
)


def exit_code(error: BaseException) -> int | None:
    """The exit code for ``error``, or None when it is not an error the command line reports."""
    for kinds, code in EXIT_CODES:
        if isinstance(error, kinds):
            return code
    return None


def error_line(error: BaseException) -> str:
    """``error`` as one line starting ``error: ``."""
    if isinstance(error, duckdb.Error):
        # DuckDB appends paragraphs of hints; the first paragraph says what went wrong.
        text = str(error).split("\n\n")[0]
    elif isinstance(error, OSError) and error.filename and error.strerror:
        text = f"{error.filename}: {error.strerror}"
    else:
        text = str(error)
    text = " ".join(text.split()) or type(error).__name__
    return text if text.startswith("error:") else f"error: {text}"


class Parser(argparse.ArgumentParser):
    """An argument parser whose complaints are a UsageError (so one ``error:`` line), not a
    usage block and ``SystemExit``. Sub-command parsers are of the same class."""

    def error(self, message: str):
        raise UsageError(f"{message} (see `{self.prog} --help`)")
