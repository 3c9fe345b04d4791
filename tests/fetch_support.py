"""What the fetch tests share: a local HTTP(S) server that plays INEP, GitHub and Hugging Face
(Range requests, a server that ignores them, a connection cut after N bytes, a stalled body,
redirects, 404), and the archives it serves: INEP-style ZIPs built from generated INEP files,
and a ZIP encrypted the way the paper's data.zip is (traditional PKWARE, "ZipCrypto"), which
Python's zipfile can read but not write.
"""

from __future__ import annotations

import io
import random
import re
import socket
import ssl
import struct
import subprocess
import threading
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from cli.main import main


@dataclass
class Served:
    """One file the server holds and how it misbehaves.

    ``cut_after``: the next GET sends this many bytes of its body and closes the connection
    (once). ``stall_after``: the next GET sends this many bytes, sets ``stalled`` and waits for
    ``release`` before the rest (once). ``ignore_range``: every GET gets the whole file (200).
    ``redirect``: answer 302 to this path instead. ``drip_seconds``: every GET sends its body
    one byte per that many seconds (until ``release`` or the client leaves). ``no_length``:
    no ``Content-Length``, the body ends when the connection closes.
    """

    body: bytes = b""
    ignore_range: bool = False
    cut_after: int | None = None
    stall_after: int | None = None
    release: threading.Event = field(default_factory=threading.Event)
    stalled: threading.Event = field(default_factory=threading.Event)
    redirect: str | None = None
    drip_seconds: float | None = None
    no_length: bool = False


class FileServer:
    """The files by URL path (no leading slash), and every GET it answered: (path, Range)."""

    def __init__(self) -> None:
        self.files: dict[str, Served] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.url = ""

    def serve(self, path: str, body: bytes = b"", **how) -> Served:
        self.files[path] = Served(body, **how)
        return self.files[path]

    def gets(self, path: str) -> list[str | None]:
        """The Range header of every GET of ``path`` (None: no Range)."""
        return [asked for got, asked in self.requests if got == path]


class _Handler(BaseHTTPRequestHandler):
    server: _OwnedServer

    def do_GET(self) -> None:
        owner = self.server.owner
        path = urlsplit(self.path).path.lstrip("/")
        asked = self.headers.get("Range")
        owner.requests.append((path, asked))
        served = owner.files.get(path)
        if served is None:
            self.send_error(404)
            return
        if served.redirect is not None:
            self.send_response(302)
            self.send_header("Location", f"/{served.redirect}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body, start = served.body, 0
        match = re.fullmatch(r"bytes=(\d+)-", asked or "")
        if match and not served.ignore_range:
            start = int(match.group(1))
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        if not served.no_length:
            self.send_header("Content-Length", str(len(body) - start))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self._body(served, body[start:])

    def _body(self, served: Served, body: bytes) -> None:
        if served.drip_seconds is not None:
            self._drip(served, body)
            return
        if served.cut_after is not None:
            limit, served.cut_after = served.cut_after, None
            self.wfile.write(body[:limit])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if served.stall_after is not None:
            limit, served.stall_after = served.stall_after, None
            self.wfile.write(body[:limit])
            self.wfile.flush()
            served.stalled.set()
            served.release.wait(60)
            body = body[limit:]
        try:
            self.wfile.write(body)
        except OSError:  # the client went away (a killed download): nothing to answer
            pass

    def _drip(self, served: Served, body: bytes) -> None:
        """One byte of ``body`` every ``served.drip_seconds`` until the test or the client
        ends it."""
        assert served.drip_seconds is not None
        for at in range(len(body)):
            if served.release.wait(served.drip_seconds):
                return
            try:
                self.wfile.write(body[at:at + 1])
                self.wfile.flush()
            except OSError:  # the client gave up
                return

    def log_message(self, format: str, *args) -> None:
        pass


class _OwnedServer(ThreadingHTTPServer):
    daemon_threads = True
    owner: FileServer


@contextmanager
def running_server(tls: ssl.SSLContext | None = None) -> Iterator[FileServer]:
    """A FileServer on 127.0.0.1 (HTTPS with ``tls``), in a thread, for the block."""
    owner = FileServer()
    httpd = _OwnedServer(("127.0.0.1", 0), _Handler)
    httpd.owner = owner
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    scheme = "https" if tls is not None else "http"
    host = "localhost" if tls is not None else "127.0.0.1"
    owner.url = f"{scheme}://{host}:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield owner
    finally:
        for served in owner.files.values():
            served.release.set()
        httpd.shutdown()
        httpd.server_close()


def self_signed_certificate(folder: Path) -> tuple[Path, Path] | None:
    """(certificate, key) for localhost made by the openssl program; None without it."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return cert, key


# --- archives ---------------------------------------------------------------------------------

def inep_zip(files: dict[str, bytes], top: str = "microdados_enem_2023") -> bytes:
    """A ZIP laid out as INEP's: the CSVs under ``TOP/DADOS/``, with the documentation folders
    beside them (small stand-ins)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{top}/LEIA-ME E DOCUMENTOS TÉCNICOS/leia_me.pdf", b"%PDF-1.4 stand-in")
        archive.writestr(f"{top}/DICIONÁRIO/dicionario.ods", b"stand-in")
        for name, body in files.items():
            archive.writestr(f"{top}/DADOS/{name}", body)
    return buffer.getvalue()


def damaged(archive: bytes, member_suffix: str) -> bytes:
    """``archive`` with one byte in the middle of a member's compressed data flipped."""
    with zipfile.ZipFile(io.BytesIO(archive)) as opened:
        info = next(i for i in opened.infolist() if i.filename.endswith(member_suffix))
    name_length, extra_length = struct.unpack_from("<2H", archive, info.header_offset + 26)
    data_start = info.header_offset + 30 + name_length + extra_length
    spot = data_start + info.compress_size // 2
    return archive[:spot] + bytes([archive[spot] ^ 0xFF]) + archive[spot + 1:]


def with_method(archive: bytes, member_suffix: str, method: int) -> bytes:
    """``archive`` with a member's compression method number rewritten in both its headers
    (to make an AES or deflate64 member out of an ordinary one)."""
    data = bytearray(archive)
    with zipfile.ZipFile(io.BytesIO(archive)) as opened:
        info = next(i for i in opened.infolist() if i.filename.endswith(member_suffix))
    struct.pack_into("<H", data, info.header_offset + 8, method)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        name_length = struct.unpack_from("<H", data, central + 28)[0]
        name = bytes(data[central + 46:central + 46 + name_length]).decode("utf-8", "replace")
        if name.endswith(member_suffix):
            struct.pack_into("<H", data, central + 10, method)
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(data)


def random_text(size: int, seed: int = 0) -> bytes:
    """Hex digits: compressible, with no long repeats (no 258-byte deflate matches)."""
    generator = random.Random(seed)
    return "".join(generator.choice("0123456789abcdef") for _ in range(size)).encode()


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC = _crc_table()


class _ZipCryptoKeys:
    """The traditional PKWARE stream cipher (APPNOTE 6.1), encrypting side."""

    def __init__(self, password: bytes) -> None:
        self.keys = [0x12345678, 0x23456789, 0x34567890]
        for byte in password:
            self._update(byte)

    def _update(self, byte: int) -> None:
        k0, k1, k2 = self.keys
        k0 = _CRC[(k0 ^ byte) & 0xFF] ^ (k0 >> 8)
        k1 = ((k1 + (k0 & 0xFF)) * 134775813 + 1) & 0xFFFFFFFF
        k2 = _CRC[(k2 ^ (k1 >> 24)) & 0xFF] ^ (k2 >> 8)
        self.keys = [k0, k1, k2]

    def encrypt(self, data: bytes) -> bytes:
        out = bytearray()
        for byte in data:
            temp = (self.keys[2] | 2) & 0xFFFF
            out.append(byte ^ (((temp * (temp ^ 1)) >> 8) & 0xFF))
            self._update(byte)
        return bytes(out)


def zipcrypto_zip(members: dict[str, bytes], password: bytes) -> bytes:
    """A ZIP of deflated members encrypted with ``password`` (ZipCrypto)."""
    out, central = io.BytesIO(), io.BytesIO()
    dos_time, dos_date = 0, (2024 - 1980) << 9 | 1 << 5 | 1
    for name, body in members.items():
        raw = name.encode("utf-8")
        crc = zlib.crc32(body)
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        compressed = packer.compress(body) + packer.flush()
        header = bytes(random.Random(len(body)).randrange(256) for _ in range(11))
        sealed = _ZipCryptoKeys(password).encrypt(header + bytes([crc >> 24]) + compressed)
        offset = out.tell()
        flags = 0x1 | 0x800  # encrypted, UTF-8 name
        out.write(struct.pack("<4s2B4HL2L2H", b"PK\x03\x04", 20, 0, flags, 8, dos_time,
                              dos_date, crc, len(sealed), len(body), len(raw), 0))
        out.write(raw + sealed)
        central.write(struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", 20, 3, 20, 0, flags, 8,
                                  dos_time, dos_date, crc, len(sealed), len(body), len(raw), 0,
                                  0, 0, 0, 0o100644 << 16, offset))
        central.write(raw)
    start = out.tell()
    out.write(central.getvalue())
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members),
                          len(central.getvalue()), start, 0))
    return out.getvalue()


def fetch(capsys, *args) -> tuple[int, str, list[str]]:
    """``enem-llm fetch ARGS --quiet`` in this process: (exit code, stdout, stderr lines)."""
    code = main(["fetch", *map(str, args), "--quiet"])
    out = capsys.readouterr()
    return code, out.out, out.err.strip().splitlines()


def one_error(lines: list[str]) -> str:
    """The one ``error:`` line of a command's stderr ``lines`` (asserted to be alone)."""
    assert len(lines) == 1 and lines[0].startswith("error:"), lines
    return lines[0]


def files_under(folder) -> list[str]:
    """Every file under ``folder`` (relative paths), sorted."""
    if not folder.exists():
        return []
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
