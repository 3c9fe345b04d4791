"""Pairing a test's OpenAI-compatible endpoint with an API key, as an operator would."""

from __future__ import annotations

from pathlib import Path


def pair_key(monkeypatch, folder: Path, url: str, key_env: str = "OPENAI_API_KEY") -> Path:
    """Write an operator.toml in ``folder`` pairing the endpoint ``url`` with ``key_env`` and
    point ``ENEM_OPERATOR_CONFIG`` at it: runs against ``url`` then send that key (without
    it they send none, ``inference.backends.openai.key``)."""
    config = Path(folder) / "operator.toml"
    config.write_text(f"[endpoints.test]\nbase_url = '{url}'\nkey_env = '{key_env}'\n",
                      encoding="utf-8")
    monkeypatch.setenv("ENEM_OPERATOR_CONFIG", str(config))
    return config
