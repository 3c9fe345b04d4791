"""The proofs that make a browser session the operator's: a secret, never a header.

Headers describe a connection as its sender wishes; a relay (nginx, a TCP forwarder, any local
process) can send whatever it likes. So a session becomes the operator's only by showing a
secret it could not have guessed:

- **the operator link** (``launch = "local"``): the server holds a random token, which
  ``make run`` (``python -m dashboard.serve``) creates, hands to Streamlit in
  :data:`TOKEN_ENV_VAR` and prints as part of the link it opens, ``http://localhost:PORT/?token=…``.
  The first visit through that link keeps the token in a cookie of that browser
  (:func:`accept_operator_link`), so later tabs and reloads carry it. A server started some
  other way (``streamlit run app.py``) draws a token of its own at its first session and writes
  the link to its log (the terminal that started it).
- **the proxy's secret** (``launch = "operators"``): the authenticating reverse proxy sends a
  secret shared with the server (``[dashboard] proxy_secret_env`` in ``operator.toml`` names the
  variable holding it) in :data:`PROXY_SECRET_HEADER`; only then is its identity header believed.

:mod:`dashboard.access` combines these proofs with the checks that can only take the role away
(loopback server, loopback Host and Origin, no proxy headers).
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import secrets
from collections.abc import Mapping

import streamlit as st

from inference.operator_config import PROXY_SECRET_HEADER

#: The variable through which the launcher hands the server its operator token.
TOKEN_ENV_VAR = "ENEM_OPERATOR_TOKEN"
#: The query parameter of the operator link.
TOKEN_PARAM = "token"
#: A token shorter than this is refused: a guessable secret is no proof.
MIN_TOKEN_LENGTH = 16
#: What a token may hold: URL-safe base64, so it travels in a link and a cookie unescaped.
_TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9_-]+")
#: Where this session keeps having shown the operator link (until the tab is closed).
PROOF_STATE = "_operator_link_shown"

_log = logging.getLogger(__name__)


def cookie_name(port: int) -> str:
    """The operator cookie of the server on ``port``: cookies do not tell ports apart, so two
    dashboards on one machine would otherwise overwrite each other's."""
    return f"enem_llm_operator_{port}"


def secrets_match(presented: object, expected: str | None) -> bool:
    """Whether ``presented`` is the string ``expected``, compared in constant time; never for
    an empty or short expected secret."""
    if not isinstance(presented, str) or not expected or len(expected) < MIN_TOKEN_LENGTH:
        return False
    return hmac.compare_digest(presented.encode(), expected.encode())


def operator_link(port: int, token: str) -> str:
    """The link that makes the browser opening it the operator's."""
    return f"http://localhost:{port}/?{TOKEN_PARAM}={token}"


@st.cache_resource(show_spinner=False)
def server_token() -> str:
    """This server's operator token: the launcher's (:data:`TOKEN_ENV_VAR`), or one drawn now
    and written to the server's log with its link."""
    given = os.environ.get(TOKEN_ENV_VAR, "")
    if len(given) >= MIN_TOKEN_LENGTH and _TOKEN_CHARACTERS.fullmatch(given):
        return given
    if given:
        _log.warning("%s is shorter than %d characters or holds characters other than "
                     "letters, digits, - and _: it is ignored", TOKEN_ENV_VAR, MIN_TOKEN_LENGTH)
    token = secrets.token_urlsafe(32)
    link = operator_link(int(st.get_option("server.port")), token)
    _log.warning("No %s was given (make run gives one): this server drew its own operator "
                 "token. The person at this machine becomes the operator by opening %s",
                 TOKEN_ENV_VAR, link)
    print(f"\n  Operator link (launches runs; for this machine's browser only):\n  {link}\n",
          flush=True)
    return token


def session_has_link_proof() -> bool:
    """Whether this session showed the operator token: through the link in this tab, or in the
    cookie the link left in this browser."""
    if st.session_state.get(PROOF_STATE) is True:
        return True
    cookie = st.context.cookies.get(cookie_name(int(st.get_option("server.port"))))
    return secrets_match(cookie, server_token())


def proxy_proof(headers: Mapping[str, str], secret_env: str | None) -> bool:
    """Whether the request ``headers`` (any case) carry the proxy's secret, read from the
    variable ``secret_env`` of the server's environment (None: no secret configured)."""
    if not secret_env:
        return False
    lowered = {key.lower(): value for key, value in headers.items()}
    return secrets_match(lowered.get(PROXY_SECRET_HEADER.lower()), os.environ.get(secret_env))


def accept_operator_link() -> None:
    """Take the token of an operator link out of the URL (it must not travel on in shared
    links or screenshots). A right token makes this session the operator's and leaves a cookie
    in the browser; a wrong one says so."""
    presented = st.query_params.get(TOKEN_PARAM)
    if presented is None:
        return
    del st.query_params[TOKEN_PARAM]
    if not secrets_match(presented, server_token()):
        st.warning("This link's operator token is not this server's (a new one is drawn at every "
                   "start): this browser is a viewer. Open the link the terminal that started "
                   "the dashboard printed.", icon=":material/key_off:")
        return
    st.session_state[PROOF_STATE] = True
    name = cookie_name(int(st.get_option("server.port")))
    # The token is URL-safe base64 (server_token checks it), so it needs no escaping inside the
    # script. SameSite=Strict: no other site's page makes this browser send it.
    st.html(f"<script>document.cookie = '{name}={server_token()}; path=/; SameSite=Strict';"
            "</script>", unsafe_allow_javascript=True, width="content")
