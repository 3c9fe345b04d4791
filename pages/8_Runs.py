"""Runs: launch a model on an exam, watch it live, cancel it, and see the exact prompts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import streamlit as st

from dashboard.data import database_state
from dashboard.state import require_database, sidebar_filters
from enem.areas import AREAS
from inference.backends import available_backends
from store.connection import PROJECT_ROOT, connected
from workflows.run_folder import list_runs

st.set_page_config(page_title="Runs", layout="wide")
st.title("Model runs")
require_database()
filters = sidebar_filters()
db_path = database_state().path
runs_dir = db_path.parent / "runs"

st.caption("A run asks a model every item of one booklet per area, in each prompt language and "
           "shot setting, under N option shuffles, and scores every shuffle as a response pattern "
           "with the same code as the human candidates. Runs are background processes: they keep "
           "going while you browse, and a stopped run continues where it left off when launched "
           "again with the same settings.")

st.subheader("Launch a run")
with st.form("launch"):
    left, middle, right = st.columns(3)
    backend = left.selectbox("Backend", available_backends(), index=0,
                             help="transformers: a local model (CUDA when present, else CPU); "
                                  "openai: any OpenAI-compatible API; random: the baseline")
    model = left.text_input("Model", help="local path or hub id (transformers), API model name "
                                          "(openai); empty means random-baseline for random")
    gguf_file = left.text_input("GGUF file inside the model folder (optional)")
    base_url = left.text_input("API base URL (openai backend)",
                               help="The key is read from OPENAI_API_KEY in the environment "
                                    "of the dashboard; it is never stored.")
    areas = middle.multiselect("Areas", AREAS, default=list(AREAS))
    languages = middle.multiselect("Prompt languages", ["pt", "en"], default=["pt"])
    shots = middle.multiselect("Shots", [0, 1, 4], default=[0])
    shuffles = right.number_input("Option shuffles per item", 1, 120, 30)
    seed = right.number_input("Seed", 0, 2**31 - 1, 0)
    family = right.text_input("Model family (for grouping)")
    launched = st.form_submit_button("Launch", type="primary")

command = [sys.executable, str(PROJECT_ROOT / "cli.py"), "run", "--db", str(db_path),
           "--backend", backend, "--year", str(filters.year), "--areas", *areas,
           "--languages", *languages, "--shots", *[str(s) for s in shots],
           "--shuffles", str(int(shuffles)), "--seed", str(int(seed))]
for flag, value in (("--model", model), ("--gguf-file", gguf_file), ("--base-url", base_url),
                    ("--family", family)):
    if value:
        command += [flag, value]
st.code(" ".join(command[1:]) + " --background", language="bash")
st.caption("The same run from the command line (drop --background to watch it in the terminal).")

if launched:
    if not areas or not languages or not shots:
        st.error("Choose at least one area, one prompt language and one shot setting.")
    elif backend != "random" and not model:
        st.error("Name the model to run.")
    else:
        result = subprocess.run(command + ["--background"], capture_output=True, text=True,
                                check=False,
                                cwd=PROJECT_ROOT)
        if result.returncode == 0:
            st.success(f"Started: {result.stdout.strip()}")
        else:
            st.error(f"The run could not start: {result.stderr.strip() or result.stdout.strip()}")


@st.fragment(run_every=2)
def live_runs() -> None:
    """Run folders with live progress; refreshed every two seconds."""
    runs = list_runs(runs_dir)
    if not runs:
        st.info("No runs launched from this machine yet: launch one above.")
        return
    for run in runs:
        status = run["status"]
        state = status.get("status", "?")
        if state == "running" and not run["alive"]:
            state = "stopped: the process is gone; launch the same run again to resume"
        total = status.get("units_total") or 0
        done = status.get("units_done") or 0
        rate = status.get("items_per_s")
        eta = status.get("eta_s")
        header = st.columns([4, 2, 2, 1])
        header[0].markdown(f"**{run['run_id']}** — {state}")
        header[1].markdown(f"{rate:.2f} items/s" if rate else "—")
        header[2].markdown(f"ETA {eta / 60:.1f} min" if eta and state == "running" else "")
        if run["alive"] and header[3].button("Cancel", key=f"cancel-{run['run_id']}"):
            os.kill(int(status["pid"]), signal.SIGTERM)
            st.toast(f"Asked {run['run_id']} to stop after its current batch.")
        st.progress(done / total if total else 0.0, text=f"{done}/{total} items")
        if status.get("error"):
            st.error(status["error"])
        if status.get("skipped"):
            st.caption(f"{len(status['skipped'])} items skipped (no text in that language or "
                       "annulled).")


st.subheader("Runs on this machine")
live_runs()

st.subheader("Runs in the database")
with connected(db_path, read_only=True) as con:
    stored = con.execute(
        """SELECT r.run_id, r.model_id, r.backend, r.origin, r.year, r.areas, r.languages,
                  r.shots, r.n_shuffles, r.status, r.finished_at,
                  (SELECT count(*) FROM model_scores s WHERE s.run_id = r.run_id) AS patterns
           FROM model_runs r ORDER BY r.finished_at DESC NULLS LAST""").df()
if stored.empty:
    st.info("No finished or imported runs yet.")
else:
    st.dataframe(stored, hide_index=True, width="stretch")
    st.caption("Finished runs and imported results; each shuffle is one scored pattern.")

st.subheader("See the exact prompt")
columns = st.columns(6)
area = columns[0].selectbox("Area", AREAS, key="runs.prompt_area")
position = columns[1].number_input("Position", 1, 45, 1, key="runs.prompt_position")
language = columns[2].selectbox("Language", ["pt", "en"], key="runs.prompt_language")
prompt_shots = columns[3].selectbox("Shots", [0, 1, 4], key="runs.prompt_shots")
shuffle = columns[4].number_input("Shuffle", 0, 119, 0, key="runs.prompt_shuffle")
prompt_seed = columns[5].number_input("Seed", 0, 2**31 - 1, 0, key="runs.prompt_seed")
try:
    from inference.plan import exact_prompt

    with connected(db_path, read_only=True) as con:
        text = exact_prompt(con, year=filters.year, area=area, position=int(position),
                            language=language, shots=prompt_shots, shuffle=int(shuffle),
                            n_shuffles=max(30, int(shuffle) + 1), seed=int(prompt_seed))
    st.code(text, language=None)
    st.caption("Exactly what the model reads; it is scored on the next token after the final "
               "'(' (one of A–E). Same as `cli.py prompt` with these settings.")
except ValueError as error:
    st.info(str(error))
