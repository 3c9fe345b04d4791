"""``enem-llm fetch``: real data in one step, tried against a local server that stands in for
INEP, GitHub and Hugging Face (tests.fetch_support). Only the base URL differs from a real
fetch (``--mirror`` / $ENEM_LLM_MIRROR): the download, resume, archive checks, extract and the
ingest or import are the code a real fetch runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

from demo import generate_demo_files
from store.layout import copy_store
from tests.db_support import query_rows
from tests.fetch_support import (
    damaged,
    fetch,
    files_under,
    inep_zip,
    one_error,
    random_text,
    running_server,
    self_signed_certificate,
    with_method,
    zipcrypto_zip,
)
from tests.paper_db_support import RESULT_FILES, SEED_SERIES, SHUFFLE_SERIES
from workflows.fetch.archives import extract, open_archive
from workflows.fetch.download import download
from workflows.fetch.errors import ArchiveError, FetchError
from workflows.fetch.sources import INEP_ZIP, MARITACA, MIRROR_ENV_VAR, PAPER_TEXTS
from workflows.question_import import import_questions

YEAR = 2023
ZIP_PATH = INEP_ZIP.path.format(year=YEAR)
PAPER_PATH = "BU-UFMG-Research/irt-llms/raw/HEAD"
ROOT = Path(__file__).resolve().parent.parent
#: ``python -m cli`` with Python's own Ctrl-C handler whatever the child inherits: a suite started
#: in the background (a shell's ``cmd &`` ignores SIGINT in what it starts) passed the ignoring
#: on, and a child told to stop never did.
CLI_WITH_CTRL_C = [sys.executable, "-c", (
    "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'cli'; runpy.run_module('cli', run_name='__main__', alter_sys=True)")]


@pytest.fixture(scope="module")
def year_files(tmp_path_factory):
    """A small generated 2023 in INEP's formats (600 candidates)."""
    return generate_demo_files(tmp_path_factory.mktemp("fetch2023"), year=YEAR,
                               n_examinees=600, seed=5, progress=False)


@pytest.fixture(scope="module")
def year_zip(year_files) -> bytes:
    """INEP's ZIP of that year: microdados_enem_2023/DADOS/{MICRODADOS_ENEM,ITENS_PROVA}."""
    return inep_zip({year_files.microdata.name: year_files.microdata.read_bytes(),
                     year_files.items.name: year_files.items.read_bytes()})


@pytest.fixture()
def server():
    with running_server() as started:
        yield started


@pytest.fixture()
def places(tmp_path):
    """(database, destination folder) of one test."""
    return tmp_path / "store" / "enem.duckdb", tmp_path / "downloads"


def candidates(db, year: int = YEAR) -> int:
    return query_rows(db, "SELECT count(*) FROM examinees WHERE year = ?", [year])[0][0]


# --- INEP ------------------------------------------------------------------------------------

def test_fetch_inep_downloads_extracts_and_ingests_the_year(server, places, year_zip,
                                                           year_files, capsys):
    db, dest = places
    server.serve(ZIP_PATH, year_zip)
    code, out, err = fetch(capsys, "inep", "--year", YEAR, "--mirror", server.url,
                           "--dest", dest, "--db", db)
    assert code == 0, err
    rows = year_files.microdata.read_bytes().count(b"\n") - 1
    assert candidates(db) == rows == 600
    source, layout, microdata = query_rows(
        db, "SELECT source, layout, microdata_file FROM ingests WHERE year = ?", [YEAR])[0]
    assert (source, layout) == ("inep", "microdados")
    folder = dest / "inep" / str(YEAR)
    assert microdata == str(folder / "MICRODADOS_ENEM_2023.csv")
    # The ZIP went after the extract; the two CSVs stay, byte for byte INEP's, nothing else.
    assert files_under(dest) == ["inep/2023/ITENS_PROVA_2023.csv",
                               "inep/2023/MICRODADOS_ENEM_2023.csv"]
    assert (folder / "MICRODADOS_ENEM_2023.csv").read_bytes() == year_files.microdata.read_bytes()
    assert server.gets(ZIP_PATH) == [None]
    assert f"year {YEAR} (microdados layout) ingested" in out


def test_a_2024_zip_holds_resultados_and_is_ingested_as_such(server, places, capsys,
                                                             demo_files_2024):
    db, dest = places
    files = demo_files_2024
    server.serve(INEP_ZIP.path.format(year=2024), inep_zip(
        {path.name: path.read_bytes() for path in (files.microdata, files.items,
                                                   files.participants)},
        top="microdados_enem_2024"))
    code, _, err = fetch(capsys, "inep", "--year", 2024, "--mirror", server.url,
                         "--dest", dest, "--db", db)
    assert code == 0, err
    assert query_rows(db, "SELECT layout FROM ingests WHERE year = 2024") == [("resultados",)]
    # PARTICIPANTES is not what the ingest reads: it is not extracted.
    assert files_under(dest) == ["inep/2024/ITENS_PROVA_2024.csv", "inep/2024/RESULTADOS_2024.csv"]


def test_keep_keeps_the_zip_and_a_second_fetch_downloads_nothing(server, places, year_zip,
                                                                 capsys):
    db, dest = places
    server.serve(ZIP_PATH, year_zip)
    args = ("inep", "--year", YEAR, "--items-only", "--keep", "--mirror", server.url,
            "--dest", dest, "--db", db)
    code, out, err = fetch(capsys, *args)
    assert code == 0, err
    assert (dest / "inep/2023/microdados_enem_2023.zip").read_bytes() == year_zip
    assert files_under(dest) == ["inep/2023/ITENS_PROVA_2023.csv",
                               "inep/2023/microdados_enem_2023.zip"]
    assert query_rows(db, "SELECT layout FROM ingests WHERE year = ?", [YEAR]) == [
        ("items-only",)]
    assert "items stored (items-only)" in out
    code, out, err = fetch(capsys, *args)
    assert code == 0, err
    assert server.gets(ZIP_PATH) == [None]  # the second fetch used the files on disk
    assert "extracted before" in out


def test_an_interrupted_download_resumes_with_a_range_request(server, places, year_zip,
                                                              capsys):
    db, dest = places
    cut = len(year_zip) // 3
    server.serve(ZIP_PATH, year_zip, cut_after=cut)
    args = ("inep", "--year", YEAR, "--items-only", "--keep", "--mirror", server.url,
            "--dest", dest, "--db", db)
    code, _, err = fetch(capsys, *args)
    assert code == 1
    line = one_error(err)
    assert f"stopped after {cut:,} of {len(year_zip):,} bytes" in line
    assert "run the same command again to resume" in line
    assert files_under(dest) == ["inep/2023/microdados_enem_2023.zip.part"]
    assert not db.exists()
    code, out, err = fetch(capsys, *args)
    assert code == 0, err
    assert server.gets(ZIP_PATH) == [None, f"bytes={cut}-"]
    assert f"resuming microdados_enem_2023.zip at {cut:,} bytes" in out
    assert (dest / "inep/2023/microdados_enem_2023.zip").read_bytes() == year_zip


def test_an_interrupted_fetch_resumes_where_its_file_stopped(server, places, year_zip, capsys):
    """A fetch stopped by Ctrl-C mid-download says so in one line and leaves its .part; the
    next fetch asks for the rest of the file."""
    db, dest = places
    served = server.serve(ZIP_PATH, year_zip, stall_after=len(year_zip) // 2)
    part = dest / "inep/2023/microdados_enem_2023.zip.part"
    environment = {k: v for k, v in os.environ.items() if k not in ("ENEM_DB", MIRROR_ENV_VAR)}
    process = subprocess.Popen(
        [*CLI_WITH_CTRL_C, "fetch", "inep", "--year", str(YEAR), "--items-only",
         "--keep", "--quiet", "--mirror", server.url, "--dest", str(dest), "--db", str(db)],
        cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    try:
        # The first half is sent, and some of it is on the disk.
        assert served.stalled.wait(120), "the server never sent the first half"
        deadline = time.monotonic() + 120
        while not (part.is_file() and part.stat().st_size > 0):
            assert process.poll() is None and time.monotonic() < deadline, "no bytes arrived"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
        served.release.set()
    assert process.returncode == 130
    assert "run the same command again to resume" in one_error(stderr.strip().splitlines())
    kept = part.stat().st_size
    assert 0 < kept < len(year_zip)
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--items-only", "--keep",
                         "--mirror", server.url, "--dest", dest, "--db", db)
    assert code == 0, err
    assert server.gets(ZIP_PATH)[-1] == f"bytes={kept}-"
    assert (dest / "inep/2023/microdados_enem_2023.zip").read_bytes() == year_zip


def test_a_killed_fetch_resumes_from_what_reached_the_disk(server, places, year_zip, capsys):
    """kill -9 mid-download (no handler runs, buffered bytes are lost): the .part holds what
    reached the disk, and the next fetch asks for the rest from exactly there."""
    db, dest = places
    served = server.serve(ZIP_PATH, year_zip, stall_after=len(year_zip) // 2)
    part = dest / "inep/2023/microdados_enem_2023.zip.part"
    environment = {k: v for k, v in os.environ.items() if k not in ("ENEM_DB", MIRROR_ENV_VAR)}
    process = subprocess.Popen(
        [*CLI_WITH_CTRL_C, "fetch", "inep", "--year", str(YEAR), "--items-only",
         "--keep", "--quiet", "--mirror", server.url, "--dest", str(dest), "--db", str(db)],
        cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert served.stalled.wait(120), "the server never sent the first half"
        deadline = time.monotonic() + 120
        while not (part.is_file() and part.stat().st_size > 0):
            assert process.poll() is None and time.monotonic() < deadline, "no bytes arrived"
            time.sleep(0.05)
        process.kill()
        process.wait(timeout=60)
    finally:
        served.release.set()
    assert process.returncode == -signal.SIGKILL
    kept = part.stat().st_size
    assert 0 < kept < len(year_zip)
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--items-only", "--keep",
                         "--mirror", server.url, "--dest", dest, "--db", db)
    assert code == 0, err
    assert server.gets(ZIP_PATH)[-1] == f"bytes={kept}-"
    assert (dest / "inep/2023/microdados_enem_2023.zip").read_bytes() == year_zip


def test_a_server_that_ignores_range_makes_the_download_start_over(server, places, year_zip,
                                                                   capsys):
    db, dest = places
    server.serve(ZIP_PATH, year_zip, ignore_range=True)
    part = dest / "inep/2023/microdados_enem_2023.zip.part"
    part.parent.mkdir(parents=True)
    garbage = b"bytes that are not the file's" * 100
    part.write_bytes(garbage)
    code, out, err = fetch(capsys, "inep", "--year", YEAR, "--items-only", "--keep",
                           "--mirror", server.url, "--dest", dest, "--db", db)
    assert code == 0, err
    assert server.gets(ZIP_PATH) == [f"bytes={len(garbage)}-"]
    assert "ignored the request to resume" in out
    assert (dest / "inep/2023/microdados_enem_2023.zip").read_bytes() == year_zip


@pytest.mark.parametrize("kind", ["damaged member", "not a zip"])
def test_a_corrupt_zip_is_refused_and_nothing_is_written(server, places, year_zip, capsys,
                                                         kind):
    db, dest = places
    body = (damaged(year_zip, "MICRODADOS_ENEM_2023.csv") if kind == "damaged member"
            else b"<html><body>Servico indisponivel</body></html>")
    server.serve(ZIP_PATH, body)
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--keep", "--mirror", server.url,
                         "--dest", dest, "--db", db)
    assert code == 1
    line = one_error(err)
    assert ("is damaged" if kind == "damaged member" else "is not a readable ZIP") in line
    assert "was removed, so the next fetch downloads it again" in line
    assert files_under(dest) == []
    assert not db.exists()


def test_a_zip_without_the_year_s_files_is_kept_and_the_error_names_them(server, places,
                                                                         year_files, capsys):
    db, dest = places
    server.serve(ZIP_PATH, inep_zip({"MICRODADOS_ENEM_2023.csv":
                                     year_files.microdata.read_bytes()}))
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--mirror", server.url,
                         "--dest", dest, "--db", db)
    assert code == 1
    line = one_error(err)
    assert "microdados_enem_2023.zip has no ITENS_PROVA_2023.csv (it holds " in line
    assert "microdados_enem_2023/DADOS/MICRODADOS_ENEM_2023.csv" in line
    assert f"the download stays at {dest / 'inep/2023/microdados_enem_2023.zip'}" in line
    assert files_under(dest) == ["inep/2023/microdados_enem_2023.zip"]
    assert not db.exists()


def test_a_year_inep_has_not_published_is_explained(server, places, capsys):
    db, dest = places
    code, _, err = fetch(capsys, "inep", "--year", 2031, "--mirror", server.url,
                         "--dest", dest, "--db", db)
    assert code == 2
    url = f"{server.url}/microdados/microdados_enem_2031.zip"
    assert one_error(err) == (f"error: INEP has not published 2031 at {url}; check the year or "
                              "use --mirror")
    assert not dest.exists() and not db.exists()


def test_the_mirror_comes_from_the_flag_or_the_environment(server, places, year_zip, capsys,
                                                           monkeypatch):
    db, dest = places
    server.serve(ZIP_PATH, year_zip)
    assert INEP_ZIP.url(year=YEAR) == (
        "https://download.inep.gov.br/microdados/microdados_enem_2023.zip")
    assert INEP_ZIP.url("http://proxy.example/enem/", year=YEAR) == (
        "http://proxy.example/enem/microdados/microdados_enem_2023.zip")
    monkeypatch.setenv(MIRROR_ENV_VAR, server.url)
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--items-only", "--dest", dest,
                         "--db", db)
    assert code == 0, err
    # The flag wins over the variable (which now names a port nobody listens on).
    monkeypatch.setenv(MIRROR_ENV_VAR, "http://127.0.0.1:9")
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--items-only", "--mirror",
                         server.url, "--dest", dest / "again", "--db", db)
    assert code == 0, err
    assert server.gets(ZIP_PATH) == [None, None]
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--items-only", "--dest",
                         dest / "third", "--db", db)
    assert code == 1 and "cannot download http://127.0.0.1:9/microdados/" in one_error(err)
    monkeypatch.setenv(MIRROR_ENV_VAR, "ftp://mirror.example")
    code, _, err = fetch(capsys, "inep", "--year", YEAR, "--dest", dest, "--db", db)
    assert code == 2 and "$ENEM_LLM_MIRROR must be an http(s) URL" in one_error(err)


def test_a_refused_ingest_keeps_the_files_and_names_the_retry(server, places, year_files,
                                                              capsys):
    db, dest = places
    header = year_files.microdata.read_bytes().split(b"\n", 1)[0] + b"\n"
    server.serve(ZIP_PATH, inep_zip({"MICRODADOS_ENEM_2023.csv": header,
                                     year_files.items.name: year_files.items.read_bytes()}))
    args = ("inep", "--year", YEAR, "--mirror", server.url, "--dest", dest, "--db", db)
    code, _, err = fetch(capsys, *args)
    assert code == 3
    line = one_error(err)
    folder = dest / "inep" / "2023"
    assert f"the extracted files stay in {folder}" in line
    assert (f"retry with `enem-llm ingest-enem --db {db} --year 2023 --microdata "
            f"{folder / 'MICRODADOS_ENEM_2023.csv'} --items {folder / 'ITENS_PROVA_2023.csv'}`"
            in line)
    assert files_under(dest) == ["inep/2023/ITENS_PROVA_2023.csv",
                               "inep/2023/MICRODADOS_ENEM_2023.csv"]
    # Fetching again retries the ingest on the kept files, without downloading.
    code, _, err = fetch(capsys, *args)
    assert code == 3 and server.gets(ZIP_PATH) == [None]


def test_an_unverifiable_certificate_is_named_and_a_ca_bundle_fixes_it(tmp_path, year_zip,
                                                                        capsys):
    made = self_signed_certificate(tmp_path)
    if made is None:
        pytest.skip("skipped: the openssl program is not installed (it makes the test's "
                    "certificate)")
    cert, key = made
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with running_server(tls) as https:
        https.serve(ZIP_PATH, year_zip)
        db, dest = tmp_path / "enem.duckdb", tmp_path / "downloads"
        args = ("inep", "--year", YEAR, "--items-only", "--mirror", https.url, "--dest", dest,
                "--db", db)
        code, _, err = fetch(capsys, *args)
        assert code == 1
        line = one_error(err)
        assert "the TLS certificate of localhost could not be verified" in line
        assert "--ca-bundle" in line and "SSL_CERT_FILE" in line
        code, _, err = fetch(capsys, *args, "--ca-bundle", cert)
        assert code == 0, err


# --- the download and the archive, on their own -----------------------------------------------

def test_a_complete_part_is_renamed_when_the_server_says_there_is_nothing_left(server,
                                                                              tmp_path):
    body = random_text(50_000)
    server.serve("f.bin", body)
    (tmp_path / "f.bin.part").write_bytes(body)
    done = download(f"{server.url}/f.bin", tmp_path / "f.bin", missing="-", progress=False)
    assert done.path.read_bytes() == body and server.gets("f.bin") == ["bytes=50000-"]


def test_a_pinned_checksum_that_differs_removes_the_download(server, tmp_path):
    server.serve("f.bin", b"the file")
    with pytest.raises(FetchError, match="SHA-256 .* not the pinned 00"):
        download(f"{server.url}/f.bin", tmp_path / "f.bin", missing="-", progress=False,
                 sha256="00" * 32)
    assert files_under(tmp_path) == []


def test_an_aes_member_is_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "a.zip"
    path.write_bytes(with_method(inep_zip({"ITENS_PROVA_2023.csv": b"x;y\n"}),
                                 "ITENS_PROVA_2023.csv", 99))
    with open_archive(path) as archive, pytest.raises(ArchiveError, match="AES-encrypted"):
        extract(archive, [(archive.infolist()[-1], tmp_path / "out.csv")], progress=False)
    assert files_under(tmp_path) == ["a.zip"]


def test_a_deflate64_member_is_read_through_unzip(tmp_path):
    if shutil.which("unzip") is None:
        pytest.skip("skipped: the unzip program is not installed")
    body = random_text(200_000, seed=3)
    path = tmp_path / "a.zip"
    path.write_bytes(with_method(inep_zip({"ITENS_PROVA_2023.csv": body}),
                                 "ITENS_PROVA_2023.csv", 9))
    with open_archive(path) as archive:
        info = archive.infolist()[-1]
        assert info.compress_type == 9
        extract(archive, [(info, tmp_path / "out.csv")], progress=False)
    assert (tmp_path / "out.csv").read_bytes() == body


def test_a_wrong_password_is_one_archive_error(tmp_path):
    path = tmp_path / "a.zip"
    path.write_bytes(zipcrypto_zip({"x/en/default/ENEM_2022_MT_CO_PROVA_1.csv": b"a,b\n"},
                                   b"right"))
    with open_archive(path) as archive, pytest.raises(ArchiveError, match="password"):
        extract(archive, [(archive.infolist()[0], tmp_path / "out.csv")], password=b"wrong",
                progress=False)
    assert files_under(tmp_path) == ["a.zip"]


# --- the paper's repository -------------------------------------------------------------------

@pytest.fixture()
def paper_server(server, real_data):
    """The paper's files as GitHub serves them: raw/HEAD redirects to the bytes. data.zip is
    built here from the real 2022 texts in the repository's layout, encrypted like the real
    one, with a shuffled copy and unrelated files beside them (not extracted)."""
    for name in RESULT_FILES:
        server.serve(f"{PAPER_PATH}/{name}", redirect=f"media/{name}")
        server.serve(f"media/{name}", (real_data / "paper-results" / name).read_bytes())
    members = {"data/README.txt": b"parsed exams"}
    for folder, language in (("pt", "pt-br"), ("en", "en")):
        for path in sorted((real_data / "paper-questions-2022" / folder).glob("*.csv")):
            members[f"data/parsed-enem-exams/{language}/default/{path.name}"] = path.read_bytes()
            members[f"data/parsed-enem-exams/{language}/shuffle-0/{path.name}"] = b"not read"
    server.serve(f"{PAPER_PATH}/data.zip", zipcrypto_zip(members, b"kdd24data"))
    return server


def test_fetch_paper_imports_the_results_and_the_texts(paper_server, places, real_items_db,
                                                       real_data, tmp_path, capsys):
    db, dest = places
    db.parent.mkdir()
    copy_store(real_items_db, db)
    code, out, err = fetch(capsys, "paper", "--mirror", paper_server.url, "--dest", dest,
                           "--db", db, "--grid-points", 121, "--grid-range", -6, 6)
    assert code == 0, err
    labels = {label for (label,) in query_rows(db, "SELECT label FROM model_runs")}
    assert labels == set(SEED_SERIES + SHUFFLE_SERIES)
    rows = query_rows(db, "SELECT count(*) FROM model_scores")[0][0]
    assert rows == 4800 + 3840
    # The texts: the same as import-questions of the shared folder stores.
    expected = tmp_path / "expected.duckdb"
    copy_store(real_items_db, expected)
    import_questions(expected, real_data / "paper-questions-2022", "paper-csv")
    texts = "SELECT year, item_id, language, stem, key FROM question_texts ORDER BY ALL"
    assert query_rows(db, texts) == query_rows(expected, texts)
    assert {language for (language,) in query_rows(
        db, "SELECT DISTINCT language FROM question_texts")} == {"pt", "en"}
    assert files_under(dest) == sorted(
        [f"paper/{name}" for name in RESULT_FILES]
        + [f"paper/questions/{folder}/{path.name}" for folder in ("en", "pt")
           for path in (real_data / "paper-questions-2022" / folder).glob("*.csv")])
    assert "stored" in out and "question texts" in out


def test_fetch_paper_asks_for_the_items_before_downloading(server, places, capsys):
    db, dest = places
    code, _, err = fetch(capsys, "paper", "--mirror", server.url, "--dest", dest, "--db", db)
    assert code == 2
    line = one_error(err)
    assert ("`enem-llm fetch inep --items-only --year 2019 --year 2020 --year 2021 "
            "--year 2022" in line)
    assert server.requests == [] and not dest.exists()


def test_the_paper_source_urls_are_the_repository_s():
    assert PAPER_TEXTS.url() == ("https://github.com/BU-UFMG-Research/irt-llms/raw/HEAD/"
                                 "data.zip")
    assert MARITACA.url(year=2023) == (
        "https://huggingface.co/datasets/maritaca-ai/enem/resolve/main/2023.jsonl")


# --- question texts ---------------------------------------------------------------------------

def _maritaca_lines(db, questions_file, booklet: int) -> bytes:
    """maritaca-ai's JSONL for the MT part of ``booklet`` (questions 136–180 of the printed
    exam), written from the generated year's own texts."""
    texts = {}
    for line in questions_file.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["language"] == "pt":
            texts[record["item_id"]] = record
    positions = query_rows(db, "SELECT position, item_id FROM items WHERE year = ? AND "
                               "booklet_id = ? AND position IS NOT NULL ORDER BY position",
                           [YEAR, booklet])
    lines = []
    for position, item_id in positions:
        text = texts[item_id]
        lines.append(json.dumps({
            "id": f"questao_{135 + position}", "exam": str(YEAR), "question": text["stem"],
            "alternatives": text["options"], "description": [],
            "label": "Anulado" if text["annulled"] else text["key"], "IU": False,
            "ledor": False}, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()


def test_fetch_texts_imports_a_maritaca_year(server, places, ingested_2023, demo_files_2023,
                                             capsys):
    db, dest = places
    db.parent.mkdir()
    copy_store(ingested_2023[0], db)
    (booklet,) = query_rows(db, "SELECT min(booklet_id) FROM booklets WHERE year = ? AND "
                                "area = 'MT'", [YEAR])[0]
    server.serve(MARITACA.path.format(year=YEAR),
                 _maritaca_lines(db, demo_files_2023.questions, booklet))
    code, out, err = fetch(capsys, "texts", "--source", "maritaca", "--year", YEAR,
                           "--booklet", f"MT={booklet}", "--mirror", server.url,
                           "--dest", dest, "--db", db)
    assert code == 0, err
    stored = query_rows(db, "SELECT count(*), min(source) FROM question_texts WHERE year = ?",
                        [YEAR])[0]
    assert stored[0] == 45 and stored[1].startswith("maritaca:2023.jsonl:questao_1")
    assert "all keys agree with the item file" in out
    assert files_under(dest) == ["texts/maritaca/2023.jsonl"]


def test_fetch_texts_refuses_before_downloading_without_a_booklet(server, places, capsys):
    db, dest = places
    code, _, err = fetch(capsys, "texts", "--source", "maritaca", "--year", YEAR,
                         "--mirror", server.url, "--dest", dest, "--db", db)
    assert code == 2 and "--booklet AREA=CO_PROVA" in one_error(err)
    code, _, err = fetch(capsys, "texts", "--source", "maritaca", "--year", 2031,
                         "--booklet", "MT=1", "--mirror", server.url, "--dest", dest,
                         "--db", db)
    assert code == 2 and "fetch inep --items-only --year 2031" in one_error(err)
    assert server.requests == [] and not dest.exists()


def test_fetch_without_a_source_is_one_error_line(capsys):
    code, _, err = fetch(capsys)
    assert code == 2 and "SOURCE" in one_error(err)
