"""What a fetch reports when it stops. Each message is one sentence a user can act on; the
command line prints it as one ``error:`` line (``cli.errors`` maps the base classes: an
``OSError`` exits 1, a ``FileNotFoundError`` 2, an ``IngestError`` 3)."""

from __future__ import annotations

from workflows.ingest import IngestError


class FetchError(OSError):
    """A download or an archive could not be used: network, HTTP status, certificate, size,
    checksum. Built from one message (never an errno), so it prints as that message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class NotPublishedError(FileNotFoundError):
    """The server has no file at the source's URL (HTTP 404/410): usually a year that is not
    published (yet), or a mirror that lacks the file."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class ArchiveError(FetchError):
    """A downloaded archive lacks a file the project needs, or is packed in a way Python's
    ``zipfile`` cannot read (the archive itself may be fine: it is kept)."""


class DamagedArchiveError(ArchiveError):
    """A downloaded archive is no ZIP or fails its CRC check: of no use, it is removed."""


class IngestAfterFetchError(IngestError):
    """The download and the extract worked but the ingest or import of the files refused them
    or stopped; the store is unchanged and the message names the kept files and the command
    that retries."""
