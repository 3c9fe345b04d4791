"""The OpenAI client a scorer sends its requests through, built so that what leaves this
process is what the project decided, not what the client finds in the environment.

* **URL**: the scorer's base URL, else the OpenAI API (``operator_config.request_url``), always
  passed to the client. Given no URL, the client would read ``$OPENAI_BASE_URL`` and send the
  OpenAI API's key there; the variable is ignored, with a warning when it is set.
* **Key**: ``key.api_key`` of that URL (the key of the endpoint the operator paired with
  it, else a placeholder that is no secret).
* **Headers**: :class:`OutgoingHeaders` runs on every request the client sends, redirects
  included. To the endpoint's own origin it sends ``Authorization: Bearer <that key>``, to any
  other origin (a redirect) no ``Authorization`` at all. The headers the client takes from the
  environment (``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID`` and every header of
  ``OPENAI_CUSTOM_HEADERS``, which may hold a credential) belong to the account whose key goes
  with them: they are sent only with a real key, to the endpoint it is paired with.
* **Deadline**: the client's connection pools obey ``deadline.request_deadline``, so the
  scorer bounds each request in wall-clock time.
"""

from __future__ import annotations

import logging
import os
from urllib.parse import urlsplit

import httpx2
import openai

from inference.backends.openai.deadline import install_deadlines
from inference.backends.openai.key import NO_KEY, api_key
from inference.operator_config import OPENAI_URL_ENV, request_url

logger = logging.getLogger(__name__)

#: Headers the OpenAI client adds from its environment variables (besides OPENAI_CUSTOM_HEADERS).
ACCOUNT_HEADERS = ("OpenAI-Organization", "OpenAI-Project")
CUSTOM_HEADERS_ENV = "OPENAI_CUSTOM_HEADERS"


def _origin(url: str | httpx2.URL) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, default ports made explicit."""
    parts = urlsplit(str(url))
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").rstrip(".").lower(), port


def custom_header_names() -> tuple[str, ...]:
    """The names of the headers ``$OPENAI_CUSTOM_HEADERS`` sets (``Name: value`` lines, as the
    OpenAI client parses them)."""
    lines = os.environ.get(CUSTOM_HEADERS_ENV, "").split("\n")
    return tuple(line.split(":", 1)[0].strip() for line in lines if ":" in line)


class OutgoingHeaders:
    """A request hook: the key goes to the endpoint's origin only, and the headers from the
    environment only along with a real key (see the module docstring)."""

    def __init__(self, url: str, key: str) -> None:
        self._origin = _origin(url)
        self._authorization = f"Bearer {key}"
        self._with_account = key != NO_KEY
        self._ambient = (*ACCOUNT_HEADERS, *custom_header_names())

    def __call__(self, request: httpx2.Request) -> None:
        ours = _origin(request.url) == self._origin
        if not (ours and self._with_account):
            for name in self._ambient:
                request.headers.pop(name, None)
        if ours:
            request.headers["Authorization"] = self._authorization
        else:
            request.headers.pop("Authorization", None)


def openai_client(base_url: str | None, timeout: float) -> tuple[openai.OpenAI, str]:
    """(the client for ``base_url``, the key it sends): see the module docstring. Raises
    BackendSettingsError (from ``api_key``) when the endpoint's key variable is unset."""
    url = request_url(base_url)
    if base_url is None and os.environ.get(OPENAI_URL_ENV, "").strip():
        logger.warning("warning: $%s is not used: without --base-url requests go to %s "
                       "(pass --base-url to use another endpoint)", OPENAI_URL_ENV, url)
    key = api_key(url)
    http_client = openai.DefaultHttpxClient(
        timeout=timeout, event_hooks={"request": [OutgoingHeaders(url, key)]})
    client = openai.OpenAI(api_key=key, base_url=url, timeout=timeout, max_retries=0,
                           http_client=install_deadlines(http_client))
    return client, key
