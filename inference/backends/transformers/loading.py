"""Loading causal LMs with transformers: local folders, hub ids and GGUF files.

GGUF files are dequantised by transformers on load (slow: ~25 s for a 135M model). The first
load of a GGUF file therefore saves a safetensors copy (model + tokenizer, in the dtype it was
loaded in) under the cache folder; later loads read that copy. The copy is written to a
temporary folder and renamed into place, so a killed process never leaves a half-written cache.

Cache folder: the ``cache_dir`` argument, else ``$ENEM_MODEL_CACHE``, else
``~/.cache/enem-llm/models``. A cache entry is keyed by the GGUF file's absolute path, size and
modification time (or hub id, file name and revision) and the dtype.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from enem.areas import OPTION_LETTERS

logger = logging.getLogger(__name__)

CACHE_ENV = "ENEM_MODEL_CACHE"
_MARKER = "gguf_source.json"
_DTYPES = {
    "float32": torch.float32, "fp32": torch.float32,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float16": torch.float16, "fp16": torch.float16,
}


@dataclass
class LoadedModel:
    """A model ready for inference (eval mode, on ``device``) and its tokenizer."""

    model: PreTrainedModel
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    source: str
    loaded_from: str
    gguf_file: str | None = None
    gguf_cache_hit: bool | None = None


def default_cache_dir() -> Path:
    """``$ENEM_MODEL_CACHE`` or ``~/.cache/enem-llm/models``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "enem-llm" / "models"


def resolve_device(device: str | torch.device | None) -> torch.device:
    """The given device, else CUDA when available, else CPU."""
    if device is not None:
        return torch.device(device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """The given dtype, else bfloat16 on CUDA and float32 elsewhere."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype is None:
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    try:
        return _DTYPES[str(dtype).lower()]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {', '.join(_DTYPES)}") from None


def split_gguf(model: str, gguf_file: str | None) -> tuple[str, str | None]:
    """(folder or hub id, GGUF file name or None); a path to a ``.gguf`` file is split."""
    if gguf_file is None and model.lower().endswith(".gguf") and Path(model).is_file():
        path = Path(model).resolve()
        return str(path.parent), path.name
    return model, gguf_file


def gguf_cache_path(
    location: str, gguf_file: str, dtype: torch.dtype, cache_dir: str | Path | None = None,
    revision: str | None = None,
) -> Path:
    """Where the safetensors copy of a GGUF model lives (it may not exist yet)."""
    local = Path(location) / gguf_file
    if local.is_file():
        stat = local.stat()
        ident = f"{local.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    else:
        ident = f"hub:{location}|{gguf_file}|{revision}"
    digest = hashlib.sha256(f"{ident}|{dtype}".encode()).hexdigest()[:16]
    name = Path(gguf_file).stem.replace(" ", "_")
    return Path(cache_dir or default_cache_dir()) / f"{name}-{digest}"


def _as_dense(model: PreTrainedModel) -> bool:
    """Detach the GGUF quantizer from a model transformers fully dequantised on load.

    Returns False (model untouched) when weights stayed packed in GGUF blocks, which cannot be
    saved as a plain checkpoint.
    """
    packed = any(not p.dtype.is_floating_point for p in model.parameters()) or any(
        "gguf" in type(m).__name__.lower() or "ggml" in type(m).__name__.lower()
        for m in model.modules()
    )
    if packed:
        return False
    for name, value in (("hf_quantizer", None), ("is_quantized", False),
                        ("quantization_method", None)):
        if hasattr(model, name):
            setattr(model, name, value)
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    return True


def _save_cache(model: PreTrainedModel, tokenizer: Any, target: Path, info: dict[str, Any]) -> None:
    """Write model + tokenizer to ``target`` atomically (temp folder, then rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".tmp-", dir=target.parent))
    try:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / _MARKER).write_text(json.dumps(info, indent=1), encoding="utf-8")
        for path in tmp.iterdir():
            path.chmod(0o644)
        tmp.chmod(0o755)  # mkdtemp makes it private; the cache is meant to be shared
        try:
            os.replace(tmp, target)
        except OSError:
            if not (target / _MARKER).is_file():
                raise
            logger.info("another process cached %s first; using theirs", target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


class ModelLoadError(ValueError):
    """transformers could not find or read the model; the message says what was tried."""


def load_model(
    model: str,
    *,
    gguf_file: str | None = None,
    device: str | torch.device | None = None,
    dtype: str | torch.dtype | None = None,
    cache_dir: str | Path | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
    local_files_only: bool = False,
) -> LoadedModel:
    """Load any model AutoModelForCausalLM/AutoTokenizer can load.

    ``model`` is a local folder, a hub id, or a path to a ``.gguf`` file; ``gguf_file`` names the
    GGUF file inside a folder or hub repo. Device defaults to CUDA when available (bfloat16),
    else CPU (float32).
    """
    try:
        return _load_model(model, gguf_file, device, dtype, cache_dir, revision,
                           trust_remote_code, local_files_only)
    except OSError as error:
        if Path(str(model)).exists():
            hint = "it exists but transformers could not read a model from it"
        elif str(model).startswith(("/", ".", "~")):
            hint = "no such file or folder"
        else:
            hint = "not a local path, and the hub could not be reached or has no such repo"
        raise ModelLoadError(f"cannot load model {model!r}: {hint} ({error})") from error


def _load_model(model, gguf_file, device, dtype, cache_dir, revision, trust_remote_code,
                local_files_only) -> LoadedModel:
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    location, gguf = split_gguf(str(model), gguf_file)
    folder = Path(location)
    if gguf is None and folder.is_dir() and not (folder / "config.json").is_file():
        found = sorted(path.name for path in folder.glob("*.gguf"))
        raise ModelLoadError(
            f"{location} has no config.json, so transformers cannot load it as a model folder"
            + (f"; it holds GGUF files, pass one with --gguf-file: {', '.join(found)}"
               if found else ""))
    common: dict[str, Any] = {
        "revision": revision, "trust_remote_code": trust_remote_code,
        "local_files_only": local_files_only,
    }
    loaded_from, cache_hit = location, None
    if gguf is not None:
        cached = gguf_cache_path(location, gguf, dt, cache_dir, revision)
        if (cached / _MARKER).is_file():
            logger.info("loading cached safetensors copy of %s from %s", gguf, cached)
            tokenizer = AutoTokenizer.from_pretrained(cached)
            net = AutoModelForCausalLM.from_pretrained(cached, dtype=dt)
            loaded_from, cache_hit = str(cached), True
        else:
            logger.info("dequantising GGUF %s (slow; cached afterwards at %s)", gguf, cached)
            tokenizer = AutoTokenizer.from_pretrained(location, gguf_file=gguf, **common)
            net = AutoModelForCausalLM.from_pretrained(
                location, gguf_file=gguf, dtype=dt, **common
            )
            info = {"source": location, "gguf_file": gguf, "dtype": str(dt)}
            if _as_dense(net):
                _save_cache(net, tokenizer, cached, info)
            else:
                logger.warning("GGUF weights of %s stayed packed; not caching a copy", gguf)
            cache_hit = False
    else:
        tokenizer = AutoTokenizer.from_pretrained(location, **common)
        net = AutoModelForCausalLM.from_pretrained(location, dtype=dt, **common)
    # transformers declares PreTrainedModel.to through functools.wraps(torch.nn.Module.to);
    # typeshed's _Wrapped is no descriptor, so mypy takes ``dev`` for ``self``.
    net.to(dev)  # type: ignore[arg-type]
    net.eval()
    return LoadedModel(
        model=net, tokenizer=tokenizer, device=dev, dtype=dt, source=str(model),
        loaded_from=loaded_from, gguf_file=gguf, gguf_cache_hit=cache_hit,
    )


def letter_token_ids(tokenizer: Any, letters: str = OPTION_LETTERS) -> tuple[tuple[int, ...], ...]:
    """Every single token that decodes to exactly one letter, ignoring surrounding whitespace.

    For each letter this finds "A", " A" (GPT-2 "ĠA", SentencePiece "▁A"), byte-fallback
    "<0x41>" and the like, excluding special tokens. The letter's probability is the sum over its
    variants. Raises ValueError if some letter has no single-token form.
    """
    vocab = tokenizer.get_vocab()
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    found: dict[str, list[int]] = {letter: [] for letter in letters}
    for token, index in vocab.items():
        if index in special or len(token) > 12:
            continue
        if not any(ch in token for ch in letters) and not token.startswith("<0x"):
            continue
        text = tokenizer.decode([index], clean_up_tokenization_spaces=False).strip()
        if text in found:
            found[text].append(index)
    missing = [letter for letter, ids in found.items() if not ids]
    if missing:
        raise ValueError(f"the tokenizer has no single token for letter(s) {', '.join(missing)}")
    return tuple(tuple(sorted(found[letter])) for letter in letters)
