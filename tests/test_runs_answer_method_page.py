"""The Runs page's answer-method picker: the method (and generate's temperature and max new
tokens) reach the command shown and the run launched, letter-prob adds no flag, and a
full-answer-prob run on a server without prompt log-probabilities is refused before it starts."""

from __future__ import annotations

import shlex

import pytest

from cli.main import build_parser
from cli.run_commands import spec_from_args
from tests.openai_support import REPLIES
from tests.page_support import assert_clean
from tests.runs_page_support import labelled, open_runs, wait_for
from workflows.runs.service import list_runs, project_command

#: The Runs page launches for the operator only (AppTest has no browser request).
pytestmark = pytest.mark.usefixtures("as_operator")


def _shown_spec(app):
    words = shlex.split(app.code[0].value)
    return words, spec_from_args(build_parser().parse_args(words[len(project_command()):]))


def test_the_answer_method_picker_feeds_the_run_command(runs_page_db, openai_server, tmp_path,
                                                        monkeypatch):
    runs_dir = runs_page_db.parent / "runs"
    # The page offers the operator's endpoints only: the fake server is one of them.
    config = tmp_path / "operator.toml"
    config.write_text(f"[endpoints.fake]\nbase_url = '{openai_server.url}'\n")
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(config))
    app = open_runs()
    labelled(app.main.selectbox, "Backend").set_value("openai").run()
    assert "--answer-method" not in shlex.split(app.code[0].value)  # letter-prob: no flag
    assert labelled(app.main.selectbox, "Endpoint").options == ["fake"]
    labelled(app.main.text_input, "Model name at this endpoint").set_value("fake")
    labelled(app.main.multiselect, "Areas").set_value(["MT"])
    labelled(app.main.number_input, "Option shuffles per item").set_value(2)
    labelled(app.main.selectbox, "Answer method").set_value("full-answer-prob")
    openai_server.echo = "refused"
    app.run()  # the choices made, the button is enabled (a browser reruns on each change)
    labelled(app.button, "Launch").click().run()
    assert not app.exception
    [error] = [e.value for e in app.error]
    assert error.startswith("The run could not start:") and "prompt log-probabilities" in error
    assert not list_runs(runs_dir)
    words, spec = _shown_spec(app)
    assert words[words.index("--answer-method") + 1] == "full-answer-prob"
    assert "--temperature" not in words and "--max-new-tokens" not in words
    assert spec.backend_options == {"base_url": openai_server.url,
                                    "answer_method": "full-answer-prob"}

    # Readable replies only: a run with a third of its answers unreadable is not published
    # (inference.run_scoring.NO_LETTER_LIMIT), and this run must publish.
    openai_server.replies = tuple(reply for reply in REPLIES if reply[1] is not None)
    labelled(app.main.selectbox, "Answer method").set_value("generate").run()
    labelled(app.main.multiselect, "Temperatures").set_value([0.3])
    labelled(app.main.number_input, "Max new tokens").set_value(12)
    labelled(app.button, "Launch").click().run()
    assert_clean(app)
    words, spec = _shown_spec(app)
    assert spec.backend_options == {"base_url": openai_server.url, "answer_method": "generate",
                                    "temperature": 0.3, "max_new_tokens": 12}
    [launched] = list_runs(runs_dir)
    assert launched.run_id == spec.run_id
    wait_for(lambda: not list_runs(runs_dir)[0].alive
             and list_runs(runs_dir)[0].state == "finished")
    asked = [body for path, body in openai_server.bodies if path.endswith("/chat/completions")]
    assert len(asked) == 45 * 2
    assert all(body["temperature"] == 0.3 and body["max_tokens"] == 12 for body in asked)
