"""One URL to one file: streamed to ``NAME.part``, resumed from that file's size with an HTTP
``Range`` request, checked against the announced size (and a pinned SHA-256 when there is one),
and renamed into place only when complete. A file already at the destination is not fetched
again.

No server can hold a download for ever or fill the disk with it:

* a download ends with a FetchError once it passes its :class:`~workflows.fetch.deadline.
  TransferLimits` (:data:`LIMITS`: 6 h in all, and at least 64 KiB in every 2 min), whatever
  the server sends; the ``.part`` is kept for the next attempt to resume;
* a body whose size the server announces is refused before anything is written when it does
  not fit in the free space of the destination's disk (:func:`room`: what is free, less a
  reserve of :data:`DISK_RESERVE_BYTES` or 5% of the disk, whichever is less); a body of no
  announced size is stopped as soon as it outgrows that room, and one that fills the disk
  anyway; both remove their ``.part``, of no use to anyone.

Certificates are always verified, against the system's store (which honours ``SSL_CERT_FILE``)
and the certificates of ``ca_bundle`` when one is given; a failure says so and never retries
without.
"""

from __future__ import annotations

import errno
import hashlib
import http.client
import os
import re
import shutil
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tqdm import tqdm

from workflows.fetch.deadline import TransferLimits, TransferWatch, watched_opener
from workflows.fetch.errors import FetchError, NotPublishedError
from workflows.fetch.progress import ProgressFile, no_progress

CHUNK_BYTES = 1 << 20
#: Seconds one network operation (connect, one read) may wait before the attempt fails.
TIMEOUT_SECONDS = 60.0
#: What one download may take (module docstring); read when a download starts.
LIMITS = TransferLimits()
#: Free space a download leaves on its disk (at most 5% of the disk, on a small one).
DISK_RESERVE_BYTES = 32 << 20
#: The errors of a write that found the disk (or the user's quota) full.
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
USER_AGENT = "enem-llm-fetch"
PART_SUFFIX = ".part"
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_UNSATISFIABLE = re.compile(r"bytes\s+\*/(\d+)")


@dataclass
class Downloaded:
    """A file in place, and how it got there (for the messages)."""

    path: Path
    size: int
    reused: bool = False
    notes: list[str] = field(default_factory=list)


class _NoRoom(Exception):
    """The body outgrew the room on the disk (``written`` bytes of the file were written),
    or the disk filled up (``disk_full``) while it was written."""

    def __init__(self, written: int, disk_full: bool = False) -> None:
        super().__init__(written)
        self.written = written
        self.disk_full = disk_full


class _RangeRefused(Exception):
    """HTTP 416: the part already holds ``total`` bytes or more (``total`` None: unknown)."""

    def __init__(self, total: int | None) -> None:
        super().__init__(total)
        self.total = total


def partial_path(dest: Path) -> Path:
    """Where the bytes of ``dest`` accumulate until it is complete."""
    return dest.with_name(dest.name + PART_SUFFIX)


def ssl_context(ca_bundle: Path | None = None) -> ssl.SSLContext:
    """A verifying TLS context: the system's certificates (OpenSSL reads ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` there), plus those of ``ca_bundle`` (a PEM file) when given, so the
    bundle may hold just the intermediate certificate a server fails to send."""
    context = ssl.create_default_context()
    if ca_bundle is None:
        return context
    bundle = Path(ca_bundle)
    if not bundle.is_file():
        raise FileNotFoundError(f"--ca-bundle {bundle}: no such file")
    try:
        context.load_verify_locations(cafile=str(bundle))
        return context
    except ssl.SSLError as error:
        raise FetchError(f"--ca-bundle {bundle} holds no usable PEM certificate ({error})") \
            from None


def download(url: str, dest: Path, *, missing: str, progress: bool = True,
             ca_bundle: Path | None = None, sha256: str | None = None,
             timeout: float = TIMEOUT_SECONDS, report: ProgressFile | None = None,
             limits: TransferLimits | None = None) -> Downloaded:
    """Fetch ``url`` into ``dest`` (see the module's docstring); ``missing`` is the message of
    a 404. Raises NotPublishedError, or FetchError whose message says whether the ``.part``
    was kept for the next attempt to resume. ``report`` records the bytes received (phase
    ``downloading``) and the checks after (``checking``); ``limits`` (default :data:`LIMITS`)
    bound the whole download, attempts included."""
    report = report if report is not None else no_progress()
    dest = Path(dest)
    if dest.is_file():
        return Downloaded(dest, dest.stat().st_size, reused=True,
                          notes=[f"using {dest} (already downloaded)"])
    part = partial_path(dest)
    context = ssl_context(ca_bundle)
    with TransferWatch(limits or LIMITS) as watch:
        notes = _attempts(url, part, watched_opener(watch, context), timeout, missing,
                          progress, report, watch)
    report.phase("checking", file=dest.name)
    _check_sha256(part, sha256, url)
    os.replace(part, dest)
    return Downloaded(dest, dest.stat().st_size, notes=notes)


def _attempts(url: str, part: Path, opener: urllib.request.OpenerDirector, timeout: float,
              missing: str, progress: bool, report: ProgressFile,
              watch: TransferWatch) -> list[str]:
    """Bring ``part`` to the whole file: resume it, or start over when the server refuses the
    resume (two attempts at most); returns the notes for the user."""
    notes: list[str] = []
    # Two attempts at most: the second starts from byte 0 after a resume the server refused.
    for _ in range(2):
        offset = part.stat().st_size if part.is_file() else 0
        try:
            with _opened(url, offset, opener, timeout, missing, watch) as response:
                start = _body_start(response, offset)
                if start is None:  # a 206 for another range: start over
                    part.unlink()
                    notes.append("the server answered the resume with another range; "
                                 "starting over")
                    continue
                if offset and start == 0:
                    notes.append(f"the server ignored the request to resume at {offset:,} "
                                 "bytes; starting over")
                elif offset:
                    notes.append(f"resuming {part.name.removesuffix(PART_SUFFIX)} at "
                                 f"{offset:,} bytes")
                total = _announced_total(response, start)
                _stream(response, url, part, start, total, progress, report, watch)
        except _RangeRefused as refused:
            if refused.total is not None and refused.total == offset:
                return notes  # the part was complete already: only the rename was missing
            part.unlink(missing_ok=True)
            notes.append("the partial download did not fit the file on the server; "
                         "starting over")
            continue
        return notes
    raise FetchError(f"{url}: the server did not let the download resume or restart")


@contextmanager
def _opened(url: str, offset: int, opener: urllib.request.OpenerDirector, timeout: float,
            missing: str, watch: TransferWatch) -> Iterator[http.client.HTTPResponse]:
    """The server's response to a GET of ``url`` from byte ``offset``, every failure before
    the body turned into a FetchError, NotPublishedError or _RangeRefused."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        response = opener.open(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        error.close()
        if error.code in (404, 410):
            raise NotPublishedError(missing) from None
        if error.code == 416:
            match = _UNSATISFIABLE.search(error.headers.get("Content-Range") or "")
            raise _RangeRefused(int(match.group(1)) if match else None) from None
        raise FetchError(f"{url} answered HTTP {error.code} {error.reason}"
                         f"{_kept(url, offset)}") from None
    except (OSError, http.client.HTTPException) as error:  # URLError is an OSError
        if watch.reason is not None:
            raise FetchError(_stopped(url, watch, offset, None, None)) from None
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        raise FetchError(_unreachable(url, reason, offset)) from None
    with response:
        yield response


def _stopped(url: str, watch: TransferWatch, size: int, total: int | None,
             part: Path | None) -> str:
    """The message of a download its watch ended (``size`` bytes on disk, of ``total``)."""
    of = f" of {total:,}" if total is not None else ""
    kept = (f"; the partial file {part} is kept: run the same command again to resume"
            if part is not None and size else _kept(url, size))
    return (f"the download of {url} was stopped after {size:,}{of} bytes: {watch.reason}; "
            f"a download may take {watch.limits.describe()}{kept}")


def room(folder: Path) -> int:
    """Bytes a download may write into ``folder``: the free space of its disk less a reserve
    of :data:`DISK_RESERVE_BYTES`, or 5% of the disk when that is less."""
    usage = shutil.disk_usage(folder)
    return max(0, usage.free - min(DISK_RESERVE_BYTES, usage.total // 20))


def _unreachable(url: str, reason: object, offset: int) -> str:
    """The message of a connection that failed before any byte of the body."""
    host = urlsplit(url).hostname or url
    if isinstance(reason, ssl.SSLCertVerificationError):
        detail = reason.verify_message or reason.reason or str(reason)
        return (f"the TLS certificate of {host} could not be verified ({detail}); INEP's "
                "server has at times sent an incomplete certificate chain. Verification stays "
                "on: pass --ca-bundle FILE with the missing intermediate certificate (or set "
                "SSL_CERT_FILE), or use --mirror" + _kept(url, offset))
    return f"cannot download {url}: {reason}{_kept(url, offset)}"


def _kept(url: str, offset: int) -> str:
    """How the message ends when a partial download waits for the next attempt."""
    if not offset:
        return ""
    return (f"; the {offset:,} bytes downloaded so far are kept: run the same command again "
            "to resume")


def _body_start(response: http.client.HTTPResponse, offset: int) -> int | None:
    """Where the response body starts in the file: 0 for a whole file (200), ``offset`` for
    the asked-for range (206), None for a 206 of another range."""
    if response.status != 206:
        return 0
    match = _CONTENT_RANGE.search(response.headers.get("Content-Range") or "")
    if match is None or int(match.group(1)) != offset:
        return None
    return offset


def _announced_total(response: http.client.HTTPResponse, start: int) -> int | None:
    """The whole file's size by the server's headers, None when it announces none."""
    length = response.headers.get("Content-Length")
    if length is None or not length.strip().isdigit():
        return None
    return start + int(length)


def _stream(response: http.client.HTTPResponse, url: str, part: Path, start: int,
            total: int | None, progress: bool, report: ProgressFile,
            watch: TransferWatch) -> None:
    """Write the body to ``part`` from byte ``start`` on (truncating what follows), then check
    the size against ``total``; a short body keeps the part for the next attempt, a body that
    does not fit on the disk removes it (module docstring)."""
    part.parent.mkdir(parents=True, exist_ok=True)  # only now: a refused URL leaves no folder
    space = room(part.parent)
    if total is not None and total - start > space:
        raise FetchError(
            f"{url} is {total:,} bytes and {total - start:,} more do not fit on the disk of "
            f"{part.parent} ({space:,} bytes may be written there); nothing was written: free "
            f"some space and run the same command again{_kept(url, start)}")
    try:
        size = _write_body(response, url, part, start, total, progress, report, watch,
                           start + space)
    except _NoRoom as full:
        part.unlink(missing_ok=True)
        why = (f"the disk of {part.parent} is full" if full.disk_full else
               f"the server announced no size and the body outgrew the {space:,} bytes that "
               f"may be written on the disk of {part.parent}")
        raise FetchError(f"the download of {url} was stopped after {full.written:,} bytes: "
                         f"{why}; the partial file was removed") from None
    if watch.reason is not None:  # the watch cut the body: its end is no end of the file
        raise FetchError(_stopped(url, watch, size, total, part))
    if total is not None and size < total:
        raise FetchError(_cut(url, size, total, None, part))
    if total is not None and size > total:
        part.unlink()
        raise FetchError(f"{url} sent {size:,} bytes, more than the {total:,} it "
                         "announced; the download was removed: run the same command again")


def _write_body(response: http.client.HTTPResponse, url: str, part: Path, start: int,
                total: int | None, progress: bool, report: ProgressFile, watch: TransferWatch,
                most: int) -> int:
    """Copy the body into ``part`` from byte ``start`` on; returns the file's size. _NoRoom
    when the file would pass ``most`` bytes or the disk is full; a read that fails raises
    FetchError (the part kept)."""
    mode = "r+b" if start and part.is_file() else "wb"
    label = part.name.removesuffix(PART_SUFFIX)
    report.phase("downloading", file=label, total=total, done=start)
    try:
        with open(part, mode) as out, tqdm(total=total, initial=start, unit="B",
                                           unit_scale=True, unit_divisor=1024, desc=label,
                                           disable=not progress, leave=False) as bar:
            out.seek(start)
            out.truncate()
            while True:
                try:
                    # read1: whatever has arrived, so the bar moves and an interrupted
                    # download keeps nearly every byte it received.
                    chunk = response.read1(CHUNK_BYTES)
                except (OSError, http.client.HTTPException) as error:
                    out.flush()
                    if watch.reason is not None:
                        raise FetchError(_stopped(url, watch, out.tell(), total, part)) \
                            from None
                    raise FetchError(_cut(url, out.tell(), total, error, part)) from None
                if not chunk:
                    return out.tell()
                if out.tell() + len(chunk) > most:
                    raise _NoRoom(out.tell())
                out.write(chunk)
                watch.received(len(chunk))
                bar.update(len(chunk))
                report.advance(len(chunk))
    except FetchError:
        raise
    except OSError as error:  # the write, or the flush when the file closes
        if error.errno in DISK_FULL:
            raise _NoRoom(part.stat().st_size if part.exists() else 0, disk_full=True) \
                from None
        raise


def _cut(url: str, size: int, total: int | None, error: object, part: Path) -> str:
    """The message of a body that stopped short."""
    of = f" of {total:,}" if total is not None else ""
    why = f" ({type(error).__name__}: {error})" if error is not None else ""
    return (f"the download of {url} stopped after {size:,}{of} bytes{why}; the partial file "
            f"{part} is kept: run the same command again to resume")


def _check_sha256(part: Path, expected: str | None, url: str) -> None:
    """Refuse (and remove) a complete download whose SHA-256 is not the pinned one."""
    if not expected:
        return
    digest = hashlib.sha256()
    with open(part, "rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    if digest.hexdigest() != expected.lower():
        part.unlink()
        raise FetchError(f"{url}: the download's SHA-256 is {digest.hexdigest()}, not the "
                         f"pinned {expected.lower()}; it was removed")
