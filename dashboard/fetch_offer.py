"""Home's offer of real data: on a store that holds only the synthetic demo, or no year of real
candidates, a section that says for each public source what would be downloaded, from where,
about how large it is, what stays on disk and the command that does it (``enem-llm fetch``,
docs/fetch.md).

The operator (``dashboard.access``) also gets a button that runs that command in the
background (``workflows.fetch.launch``) and the fetch's progress, read back from the file the
command writes; a viewer gets the commands and one line saying the button is the operator's.
Nothing the browser sends reaches the command but a year from a fixed list and a switch; the
store is the server's own. Sizes are the source table's numbers: the page asks no server
anything.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard import access, queries
from dashboard.data import DatabaseState, database_state
from workflows.fetch.launch import (
    FetchJob,
    FetchRequest,
    fetch_job,
    start_fetch_in_background,
    terminal_command,
)
from workflows.fetch.sources import (
    INEP_LATEST_YEAR,
    INEP_YEARS,
    INEP_ZIP,
    MARITACA,
    PAPER_RESULTS,
    PAPER_TEXTS,
    PAPER_YEARS,
    inep_items_name,
    inep_microdata_names,
    mirror_base,
)

#: Seconds between two looks at a working fetch's progress file.
REFRESH_SECONDS = 1
#: Session keys: the request this session launched, whether the progress is being followed,
#: and the pickers.
LAUNCHED_KEY = "home.fetch.launched"
ACTIVE_KEY = "home.fetch.active"
YEAR_KEY = "home.fetch.year"
ITEMS_ONLY_KEY = "home.fetch.items_only"
#: The program as a reader types it from the project folder (``make run`` installs it there);
#: a viewer reads this form, never the server's paths.
PROGRAM = ".venv/bin/enem-llm"
#: Where ``fetch`` keeps its files unless told otherwise (``cli.fetch_commands``).
DOWNLOADS = "downloads/"
TITLE = "Add real data"
#: The working phases in order, for "step 2 of 4".
STEPS = ("downloading", "checking", "extracting", "ingesting")


def wants_real_data(overview: pd.DataFrame) -> bool:
    """True when no stored year holds real candidates: an empty store, only the synthetic
    demo, or real item files without their candidates."""
    if overview.empty:
        return True
    real = ~overview["is_synthetic"].fillna(False).astype(bool)
    with_people = overview["candidates"].fillna(0) > 0
    return not bool((real & with_people).any())


def offer_on_empty_store(title: str) -> None:
    """On a store with no year at all, draw ``title``, say so, offer real data and stop the
    page (the frame would stop it with the same news and no offer); else do nothing."""
    state = database_state()
    if not state.usable or state.has_humans:
        return
    st.title(title)
    st.info(f"The database `{state.path.name}` is empty: nothing has been ingested yet. Add a "
            "real year below, or build the synthetic demo with `enem-llm demo`.")
    real_data_section(state, pd.DataFrame(), expanded=True)
    st.stop()


def real_data_section(state: DatabaseState | None = None, overview: pd.DataFrame | None = None,
                      *, expanded: bool = False) -> None:
    """The offer (when the store wants real data) and the progress of a fetch: nothing on a
    store with real candidates unless this session's fetch just put them there."""
    state = state or database_state()
    overview = queries.overview() if overview is None else overview
    launched = st.session_state.get(LAUNCHED_KEY)
    wanted = wants_real_data(overview)
    if not wanted and launched is None:
        return
    role = access.session_access(access.operator_config())
    if not wanted:
        _progress(state.path, role)
        return
    job = fetch_job(state.path)
    open_now = expanded or job.working or launched is not None
    with st.expander(TITLE, expanded=open_now, icon=":material/download:"):
        st.markdown(
            "This store holds no real candidates. The public sources below add them, through "
            "the same checked download, extract and ingest as `enem-llm fetch` on the command "
            "line (docs/fetch.md). Sizes are rough, from the project's source table; a "
            "download resumes where it stopped.")
        _mirror_note(role)
        inep, paper, texts = st.tabs(["INEP microdata", "The seed paper's results",
                                      "Question texts"])
        with inep:
            _inep_offer(state.path, role, job, overview)
        with paper:
            _paper_offer(state.path, role, job, overview)
        with texts:
            _texts_offer()
        _progress(state.path, role)


# --- the sources ---------------------------------------------------------------------------------

def _facts(rows: dict[str, str]) -> None:
    """What a fetch does, one line per fact (a list, not a table with an empty header row;
    Markdown wraps inside the expander)."""
    st.markdown("\n".join(f"- **{name}**: {value}" for name, value in rows.items()))


def inep_facts(year: int, items_only: bool) -> dict[str, str]:
    """What ``fetch inep`` of ``year`` downloads, from where, how large, and what it keeps."""
    microdata = inep_microdata_names(year)[0]
    kept = (f"`{inep_items_name(year)}` only" if items_only else
            f"`{microdata}` and `{inep_items_name(year)}`: the ZIP's uncompressed contents, "
            "larger than the ZIP")
    return {
        "What": f"INEP's microdata of ENEM {year}: " + (
            "the item file only (booklets, keys, item parameters): enough for model runs and "
            "the paper's results, without the candidates" if items_only else
            "every candidate's answers and scores, and the item file"),
        "From": f"`{INEP_ZIP.url(year=year)}`",
        "Size": f"about {INEP_ZIP.approx_size} for one year's ZIP (a rough range, not this "
                "year's exact size)",
        "Kept": f"{kept}, in `{DOWNLOADS}inep/{year}/` beside the store; the ZIP is removed "
                "after the extract",
        "Then": ("stored in this store as `enem-llm ingest-items` does (seconds): the year's "
                 "booklets and items, no candidates" if items_only else
                 "ingested into this store with INEP's scoring recipe, as `enem-llm "
                 "ingest-enem` does (a full year takes minutes)"),
    }


def _inep_offer(db_path: Path, role: access.Access, job: FetchJob,
                overview: pd.DataFrame) -> None:
    left, right = st.columns([1, 3])
    year = int(left.selectbox("Exam year", INEP_YEARS, index=INEP_YEARS.index(INEP_LATEST_YEAR),
                              key=YEAR_KEY))
    items_only = right.toggle("Items only (no candidates)", key=ITEMS_ONLY_KEY,
                              help="Only the item file: a small part of the ZIP, stored as "
                                   "`enem-llm ingest-items` does")
    request = FetchRequest("inep", year, items_only)
    _facts(inep_facts(year, items_only))
    if year in _synthetic_years(overview):
        st.caption(f"This store's {year} is the synthetic demo: the real {year} replaces it.")
    _command_and_button(request, db_path, role, job, f"Fetch INEP {year}")


def _paper_offer(db_path: Path, role: access.Access, job: FetchJob,
                 overview: pd.DataFrame) -> None:
    seeds, shuffles = PAPER_RESULTS["seeds"], PAPER_RESULTS["shuffles"]
    _facts({
        "What": "the seed paper's published model runs (30 sampling seeds and 30 option "
                f"shuffles of five LLMs, {PAPER_YEARS[0]}–{PAPER_YEARS[-1]}) and its parsed "
                "exams (question texts, Portuguese and English)",
        "From": f"`{seeds.url()}`, `{shuffles.url()}` and `{PAPER_TEXTS.url()}`",
        "Size": f"{seeds.approx_size} per results file; the exams' ZIP: size not published",
        "Kept": f"the two parquet files and the extracted texts in `{DOWNLOADS}paper/`; the "
                "ZIP is removed after the extract",
        "Then": "imported as `enem-llm import-results` and `import-questions` do, re-scored "
                "on the stored items of their years",
    })
    missing = sorted(set(PAPER_YEARS) - _item_years(overview))
    if missing:
        st.caption("Needs the items of " + ", ".join(map(str, missing)) + " in the store "
                   "first: fetch those INEP years (items only is enough).")
    _command_and_button(FetchRequest("paper"), db_path, role, job, "Fetch the paper's results",
                        blocked=bool(missing))


def _texts_offer() -> None:
    year = PAPER_YEARS[-1] + 1
    _facts({
        "What": "a year's question texts from maritaca-ai's `enem` dataset on Hugging Face "
                "(2022–2024 when this was written), linked to the stored items",
        "From": f"`{MARITACA.url(year=year)}` (for {year})",
        "Size": MARITACA.approx_size or "not known",
        "Kept": f"the JSONL file in `{DOWNLOADS}texts/maritaca/`",
    })
    st.code(f"{PROGRAM} fetch texts --source maritaca --year {year} --booklet LC=… "
            "--booklet CH=… --booklet CN=… --booklet MT=…", language="bash", wrap_lines=True)
    st.caption("The texts are numbered by one printed booklet per area, which you choose "
               "(the year's item file gives each booklet's area and colour), so this fetch "
               "runs from the command line only.")


def _command_and_button(request: FetchRequest, db_path: Path, role: access.Access,
                        job: FetchJob, label: str, blocked: bool = False) -> None:
    """The command line of ``request``, and for the operator the button that runs it."""
    st.code(terminal_command(request, program=PROGRAM), language="bash", wrap_lines=True)
    if not role.may_operate:
        access.viewer_note(role, "Starting a fetch from this page")
        return
    st.caption("The button runs this command in the background on this store (`--db "
               f"{db_path}`); it keeps going if you close the page.")
    if st.button(label, type="primary", disabled=blocked or job.working,
                 key=f"home.fetch.{request.source}",
                 help="One fetch at a time" if job.working else None):
        _launch(request, db_path)


def _launch(request: FetchRequest, db_path: Path) -> None:
    try:
        start_fetch_in_background(request, db_path)
    except (OSError, ValueError) as error:
        st.error(f"The fetch could not start: {error}")
        return
    st.session_state[LAUNCHED_KEY] = request
    st.session_state[ACTIVE_KEY] = True
    # Drawn before the click was handled, the buttons still look free: draw the page again.
    st.rerun()


def _mirror_note(role: access.Access) -> None:
    """For the operator: the mirror the server's environment names, which every download uses
    instead of the hosts listed below."""
    if not role.may_operate:
        return
    try:
        mirror = mirror_base(None)
    except ValueError as error:
        st.warning(f"Fetches will fail: {error}")
        return
    if mirror:
        st.caption(f"The server's environment sets a mirror: files come from `{mirror}` with "
                   "the paths below.")


def _synthetic_years(overview: pd.DataFrame) -> set[int]:
    if overview.empty:
        return set()
    synthetic = overview["is_synthetic"].fillna(False).astype(bool)
    return {int(year) for year in overview.loc[synthetic, "year"]}


def _item_years(overview: pd.DataFrame) -> set[int]:
    if overview.empty:
        return set()
    return {int(year) for year in overview.loc[overview["items"].fillna(0) > 0, "year"]}


# --- progress ----------------------------------------------------------------------------------

def _progress(db_path: Path, role: access.Access) -> None:
    """The store's fetch, refreshed while it works; when it stops working the whole app reruns,
    so the sidebar and the page read the store it changed."""
    if ACTIVE_KEY not in st.session_state:
        st.session_state[ACTIVE_KEY] = fetch_job(db_path).working

    def draw() -> None:
        job = fetch_job(db_path)
        if st.session_state.get(ACTIVE_KEY) != job.working:
            st.session_state[ACTIVE_KEY] = job.working
            st.rerun()
        launched = st.session_state.get(LAUNCHED_KEY)
        # A running fetch shows to everyone (it is why the button is off); how one ended, to
        # the session that started it, and a failure also to the operator who comes back.
        if (job.working or launched is not None
                or (role.may_operate and job.state in ("failed", "stopped"))):
            draw_job(job, role, launched)

    active = bool(st.session_state.get(ACTIVE_KEY))
    st.fragment(run_every=REFRESH_SECONDS if active else None)(draw)()


def draw_job(job: FetchJob, role: access.Access, launched: FetchRequest | None) -> None:
    """One fetch's state: a progress bar while it downloads or extracts, a line for the other
    phases, the outcome when it ended (the log's place for the operator only)."""
    progress = job.progress
    if progress is None or job.state == "none":
        return
    task = progress.task or "the fetch"
    log = f" Its log: `{job.log}`." if role.may_operate else ""
    if job.state == "done":
        st.success(f"Fetched {task}: it is in the store. " + _where_it_shows(launched)
                   + " The dashboard reads the new store without a restart.",
                   icon=":material/check_circle:")
    elif job.state == "failed":
        why = progress.message or "the fetch process ended without saying why"
        shown = why if role.may_operate else access.without_paths(why)
        st.error(f"The fetch of {task} failed: {shown}.{log}")
    elif job.state == "stopped":
        st.warning(f"The fetch of {task} stopped while {progress.phase}: its process is "
                   f"gone. Start it again to resume the download.{log}")
    elif job.state == "starting" or progress.phase == "starting":
        st.info(f"Starting the fetch of {task}…", icon=":material/hourglass_top:")
    else:
        _working(progress.phase, task, progress.file, progress.done, progress.total,
                 progress.fraction, progress.phase_started_at)


def _working(phase: str, task: str, file: str, done: int | None, total: int | None,
             fraction: float | None, since: float | None) -> None:
    step = f"step {STEPS.index(phase) + 1} of {len(STEPS)}" if phase in STEPS else phase
    what = f" `{file}`" if file else ""
    elapsed = f", {_duration(time.time() - since)} so far" if since else ""
    if fraction is not None and done is not None and total:
        st.progress(fraction, text=f"Fetching {task} — {step}: {phase}{what}: "
                                   f"{human_bytes(done)} of {human_bytes(total)} "
                                   f"({fraction:.0%}){elapsed}")
        return
    counted = f" ({human_bytes(done)})" if done else ""
    hint = " A full year takes minutes." if phase == "ingesting" else ""
    st.info(f"Fetching {task} — {step}: {phase}{what}{counted}{elapsed}.{hint}",
            icon=":material/sync:")


def _where_it_shows(launched: FetchRequest | None) -> str:
    """Where the reader finds what the fetch added."""
    if launched is not None and launched.source == "inep":
        return f"Pick **{launched.year}** in the sidebar's **Year**."
    if launched is not None and launched.source == "paper":
        return (f"Its runs are in the sidebar's runs for {PAPER_YEARS[0]}–"
                f"{PAPER_YEARS[-1]}.")
    return "The new year is in the sidebar's **Year**."


def human_bytes(count: int) -> str:
    """``count`` bytes in words: ``312.4 MB``, ``1.2 GB`` (powers of 1000, as the sizes of the
    source table)."""
    value = float(count)
    for unit in ("bytes", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value):,} {unit}" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{value:,.1f} GB"


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds} s" if minutes else f"{seconds} s"
