"""The OpenAI backend's API key: read from the environment and checked before any request.

Apart from ``openai_backend`` (which imports the OpenAI client) so that a run can be refused for
a missing key before anything is imported, written or sent (``inference.backends.check_backend``).

The key comes from ``OPENAI_API_KEY`` only. A server on this machine (``localhost``, a loopback
address, ``0.0.0.0`` as vLLM and llama.cpp print it) may go without one: a dummy key is sent.
Any other endpoint without a key is refused.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from inference.backends.base import BackendSettingsError

API_KEY_ENV = "OPENAI_API_KEY"
LOCAL_DUMMY_KEY = "sk-local-no-auth"
#: Host names that reach this machine, besides loopback addresses.
LOCAL_HOSTS = ("localhost", "0.0.0.0", "::")


def is_local_url(url: str | None) -> bool:
    """True when ``url`` points at this machine (see the module docstring); False for None."""
    try:
        host = urlsplit(url).hostname if url else None
    except ValueError:  # a malformed URL (e.g. a bad port) is not local
        return False
    if not host:
        return False
    host = host.rstrip(".").lower()
    if host in LOCAL_HOSTS or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_key(base_url: str | None) -> str:
    """The key to send to ``base_url`` (None: the OpenAI API).

    Raises BackendSettingsError when ``OPENAI_API_KEY`` is unset and the endpoint is not local.
    """
    key = os.environ.get(API_KEY_ENV, "").strip()
    if key:
        return key
    if is_local_url(base_url):
        return LOCAL_DUMMY_KEY
    raise BackendSettingsError(
        f"set {API_KEY_ENV} to use {base_url or 'the OpenAI API'} (only a server on this "
        "machine, e.g. http://127.0.0.1:8000/v1, may go without a key)")
