"""ZIP archives: find members by file name wherever they sit, stream each to its destination
(no temporary copy of the archive), all or nothing.

Integrity: ``zipfile`` checks each member's CRC-32 when its last byte is read, so every byte
written was checked, and a damaged member stops the extract before anything is renamed into
place. Members are written to ``NAME.part`` and renamed only when all of them are complete.

Compression: stored, deflate, bzip2 and LZMA are read by ``zipfile``; deflate64 (written by
Windows for large archives) is read through the ``unzip`` program when it is installed. AES
encryption (WinZip's, method 99) is refused with a message: ``zipfile`` decrypts only the
traditional PKWARE scheme (ZipCrypto).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from tqdm import tqdm

from workflows.fetch.errors import ArchiveError, DamagedArchiveError
from workflows.fetch.progress import ProgressFile, no_progress

CHUNK_BYTES = 1 << 20
#: ZIP compression methods with a special meaning here.
DEFLATE64 = 9
AES = 99
PART_SUFFIX = ".part"


@contextmanager
def downloaded_archive(path: Path, by_hand: str) -> Iterator[zipfile.ZipFile]:
    """The downloaded archive at ``path``, open for the block. A damaged one is removed (it
    is of no use, and the next fetch must download it again); any other ArchiveError keeps it
    and ends with ``by_hand``, what to do with it instead."""
    try:
        with open_archive(path) as archive:
            yield archive
    except DamagedArchiveError as error:
        Path(path).unlink(missing_ok=True)
        raise DamagedArchiveError(f"{error}; the download {path} was removed, so the next "
                                  "fetch downloads it again") from None
    except ArchiveError as error:
        raise ArchiveError(f"{error}; the download stays at {path}: {by_hand}") from None


def open_archive(path: Path) -> zipfile.ZipFile:
    """``path`` opened as a ZIP archive; ArchiveError when it is none (a cut or damaged
    download, an HTML error page saved under the archive's name)."""
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as error:
        raise DamagedArchiveError(f"{Path(path).name} is not a readable ZIP archive "
                                  f"({error})") from None


def member_name(info: zipfile.ZipInfo) -> str:
    """The file name of a member, without its folders."""
    return PurePosixPath(info.filename.replace("\\", "/")).name


def find_member(archive: zipfile.ZipFile, names: Sequence[str]) -> zipfile.ZipInfo:
    """The member whose file name is one of ``names`` (case aside), in any folder; the first
    name that matches wins. ArchiveError listing a few of the archive's files otherwise."""
    files = [info for info in archive.infolist() if not info.is_dir()]
    for name in names:
        found = [info for info in files if member_name(info).lower() == name.lower()]
        if found:
            return found[0]
    shown = ", ".join(info.filename for info in files[:8])
    more = f" and {len(files) - 8} more" if len(files) > 8 else ""
    raise ArchiveError(f"{Path(str(archive.filename)).name} has no {' or '.join(names)} "
                       f"(it holds {shown or 'no file'}{more})")


def members_where(archive: zipfile.ZipFile,
                  keep: Callable[[PurePosixPath], bool]) -> list[zipfile.ZipInfo]:
    """The files of the archive whose path (folders included) ``keep`` accepts."""
    return [info for info in archive.infolist() if not info.is_dir()
            and keep(PurePosixPath(info.filename.replace("\\", "/")))]


def extract(archive: zipfile.ZipFile, targets: Sequence[tuple[zipfile.ZipInfo, Path]], *,
            password: bytes | None = None, progress: bool = True,
            report: ProgressFile | None = None) -> list[Path]:
    """Stream each member to its target path, all or nothing: on any failure the partial files
    are removed and ArchiveError says why; no target is touched until every member checked.
    ``report`` records the bytes written (phase ``extracting``)."""
    report = report if report is not None else no_progress()
    for info, _ in targets:
        _check_readable(archive, info)
    written: list[tuple[Path, Path]] = []
    total = sum(info.file_size for info, _ in targets)
    report.phase("extracting", file=Path(str(archive.filename)).name, total=total)
    try:
        with tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="extracting",
                  disable=not progress, leave=False) as bar:
            for info, target in targets:
                target.parent.mkdir(parents=True, exist_ok=True)
                part = target.with_name(target.name + PART_SUFFIX)
                written.append((part, target))
                _copy_member(archive, info, part, password, bar, report)
    except BaseException:
        for part, _ in written:
            part.unlink(missing_ok=True)
        raise
    for part, target in written:
        os.replace(part, target)
    return [target for _, target in written]


def _check_readable(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse, before anything is written, a member no reader here can decode."""
    if info.compress_type == AES:
        raise ArchiveError(
            f"{info.filename} in {Path(str(archive.filename)).name} is AES-encrypted, which "
            "Python's zipfile cannot decrypt; extract the archive with 7-Zip and import the "
            "extracted files by hand (see docs/fetch.md)")
    if info.compress_type == DEFLATE64 and shutil.which("unzip") is None:
        raise ArchiveError(
            f"{info.filename} is compressed with deflate64, which Python's zipfile cannot "
            "read; install the `unzip` program (or extract the archive by hand and ingest the "
            "files: docs/fetch.md)")


def _copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, part: Path,
                 password: bytes | None, bar: tqdm, report: ProgressFile) -> None:
    """Stream one member to ``part``; its CRC is checked as its last byte is read."""
    if info.compress_type == DEFLATE64:
        _copy_with_unzip(Path(str(archive.filename)), info, part, password, bar)
        report.advance(info.file_size)
        return
    try:
        with archive.open(info, pwd=password) as source, open(part, "wb") as out:
            while chunk := source.read(CHUNK_BYTES):
                out.write(chunk)
                bar.update(len(chunk))
                report.advance(len(chunk))
    except RuntimeError as error:  # zipfile's "Bad password" / "password required"
        raise ArchiveError(f"{info.filename}: {error}") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as error:
        raise DamagedArchiveError(f"{info.filename} in {Path(str(archive.filename)).name} is "
                                  f"damaged ({error})") from None


def _copy_with_unzip(path: Path, info: zipfile.ZipInfo, part: Path, password: bytes | None,
                     bar: tqdm) -> None:
    """Stream a deflate64 member through ``unzip -p`` (which checks its CRC too)."""
    command = ["unzip", "-p", "-qq"]
    if password is not None:
        command += ["-P", password.decode()]
    command += [str(path), info.filename]
    with open(part, "wb") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, check=False)
    written = part.stat().st_size
    bar.update(written)
    if done.returncode != 0 or written != info.file_size:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise DamagedArchiveError(f"{info.filename} in {path.name} is damaged (unzip: "
                                  f"{message[-1] if message else f'exit {done.returncode}'})")
