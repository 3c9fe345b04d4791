"""Who may start work from a browser session: the operator, or a viewer.

An *operator* may launch, cancel and remove runs, launch adaptive tests, write item
attributes, build reports, build the demo store and clear the caches. Everybody else is a
*viewer*: every figure, table and download, and nothing that starts work, changes the store or
shows a path of the server.

Being the operator rests on a secret the session showed (:mod:`dashboard.operator_proof`);
headers and addresses can only take the role away, never give it. The rule (the operator's
``[dashboard] launch`` setting, ``inference.operator_config``):

- ``"local"`` (the default): the browser that opened the operator link ``make run`` printed
  (its token, then the cookie it left). Even with the token, the session is a viewer unless the
  server listens on loopback only, the Host and the page's Origin name a loopback host, the
  connection comes from loopback and no proxy header (``X-Forwarded-For``, ``Forwarded``,
  ``X-Real-IP``, ``X-Forwarded-Host``, ``Via``, ``X-Forwarded-Proto``) is present.
- ``"operators"``: the identities listed in ``operators``, as an authenticating reverse proxy
  names them in the header that ``server.trustedUserHeaders`` maps to ``email``. The identity
  is believed only on a request carrying the secret the proxy shares with the server
  (``proxy_secret_env``), and only while the server listens on loopback.
- ``"never"``: nobody; the dashboard is a viewer for everyone.

:func:`decide` is the rule on plain values; :func:`session_access` gathers them from the
running Streamlit session.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import streamlit as st

from dashboard import operator_proof
from inference.operator_config import (
    CONFIG_ENV_VAR,
    DashboardAccess,
    OperatorConfig,
    OperatorConfigError,
    load_operator_config,
)

#: Host names that reach this machine, besides loopback addresses.
LOOPBACK_NAMES = ("localhost",)
#: Headers a proxy adds; their presence means the browser is not talking to us directly.
FORWARDING_HEADERS = ("x-forwarded-for", "forwarded", "x-real-ip", "x-forwarded-host", "via",
                      "x-forwarded-proto")
#: An absolute path: a ``/`` that starts a word, then at least one ``name/``.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])/(?:[^\s/'\"`]+/)+")
#: Where a session keeps the role its last check gave it, for handlers that run outside a
#: script run (the cache-clearing guard of :mod:`dashboard.operator_proof`).
OPERATOR_STATE = "_may_operate"
#: The key of ``st.user`` that the trusted header is mapped to.
IDENTITY_KEY = "email"


@dataclass(frozen=True)
class SessionFacts:
    """What the server knows about one browser session."""

    server_address: str | None
    host: str | None
    origin: str | None
    #: The peer's address; None when it is loopback (as ``st.context.ip_address`` reports).
    client_ip: str | None
    forwarded: bool
    identity: str | None
    trusted_header: bool
    #: The session showed its secret: the operator link's token (``"local"``), or the proxy's
    #: shared secret (``"operators"``).
    proof: bool


@dataclass(frozen=True)
class Access:
    """The session's role; ``why`` says in a sentence why a viewer cannot operate."""

    may_operate: bool
    why: str = ""


def is_loopback_host(host: str | None) -> bool:
    """True for ``localhost`` (and ``*.localhost``) and loopback IP addresses."""
    if not host:
        return False
    host = host.strip("[]").rstrip(".").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _hostname(value: str | None, with_scheme: bool) -> str | None:
    """The host name of a Host header (``name:port``) or an Origin (``scheme://name:port``)."""
    if not value:
        return None
    try:
        return urlsplit(value if with_scheme else f"//{value}").hostname
    except ValueError:
        return None


def decide(facts: SessionFacts, policy: DashboardAccess) -> Access:
    """The role of a session with ``facts`` under the operator's ``policy``."""
    if policy.launch == "never":
        return Access(False, "the operator made this dashboard read-only")
    loopback_server = is_loopback_host(facts.server_address)
    if policy.launch == "operators":
        if not facts.trusted_header:
            return Access(False, "no identity header is configured "
                                 "(server.trustedUserHeaders)")
        if not loopback_server:
            return Access(False, "identities from a proxy's header count only when the "
                                 "server listens on loopback behind that proxy")
        if not facts.proof:
            return Access(False, "this request did not come through the authenticating proxy "
                                 "(its shared secret is missing)")
        if facts.identity and facts.identity in policy.operators:
            return Access(True)
        return Access(False, "you are not one of this dashboard's operators")
    local = (loopback_server and facts.client_ip is None and not facts.forwarded
             and is_loopback_host(_hostname(facts.host, with_scheme=False))
             and (facts.origin is None
                  or is_loopback_host(_hostname(facts.origin, with_scheme=True))))
    if not local:
        return Access(False, "this dashboard is served to others, so it is a viewer; runs are "
                             "started on the server's command line or by its operators")
    if not facts.proof:
        return Access(False, "this browser has not opened the operator link that `make run` "
                             "printed in its terminal")
    return Access(True)


def session_facts(headers: Mapping[str, str], server_address: str | None,
                  client_ip: str | None, user: Mapping[str, object],
                  trusted_header: bool, proof: bool) -> SessionFacts:
    """:class:`SessionFacts` from a session's request headers (any case), server options and
    whether the session showed its secret."""
    lowered = {key.lower(): value for key, value in headers.items()}
    identity = user.get(IDENTITY_KEY)
    return SessionFacts(server_address=server_address, host=lowered.get("host"),
                        origin=lowered.get("origin"), client_ip=client_ip,
                        forwarded=any(name in lowered for name in FORWARDING_HEADERS),
                        identity=identity if isinstance(identity, str) else None,
                        trusted_header=trusted_header, proof=proof)


def operator_config() -> OperatorConfig | None:
    """The operator's file, or None (with an error on the page) when it cannot be read."""
    try:
        return load_operator_config()
    except OperatorConfigError as error:
        st.error(f"The operator's configuration cannot be used, so this dashboard is a "
                 f"viewer: {error} (operator.toml or ${CONFIG_ENV_VAR}).")
        return None


def session_access(config: OperatorConfig | None = None) -> Access:
    """This browser session's role (see the module docstring)."""
    config = config if config is not None else operator_config()
    if config is None:
        return Access(False, "the operator's configuration cannot be read")
    headers = dict(st.context.headers)
    policy = config.dashboard
    if policy.launch == "operators":
        proof = operator_proof.proxy_proof(headers, policy.proxy_secret_env)
    else:
        proof = policy.launch == "local" and operator_proof.session_has_link_proof()
    facts = session_facts(headers, st.get_option("server.address"), st.context.ip_address,
                          st.user.to_dict(), bool(st.get_option("server.trustedUserHeaders")),
                          proof)
    access = decide(facts, policy)
    st.session_state[OPERATOR_STATE] = access.may_operate
    return access


def settle_role() -> Access:
    """This session's role, checked once at the top of every script run (``app.py``) and kept
    in ``st.session_state`` for handlers outside the run; a broken ``operator.toml`` makes a
    viewer without an error here (the pages that offer operator controls say why)."""
    try:
        config = load_operator_config()
    except OperatorConfigError:
        st.session_state[OPERATOR_STATE] = False
        return Access(False, "the operator's configuration cannot be read")
    return session_access(config)


def viewer_note(access: Access, what: str) -> None:
    """One line telling a viewer that ``what`` (e.g. "Launching runs") is for the operator."""
    st.info(f"{what} is for this dashboard's operator: {access.why}. See the README, "
            "\"Serving the dashboard to colleagues\".", icon=":material/lock:")


def without_paths(text: str) -> str:
    """``text`` with the folders of every absolute path left out (``/srv/m/x.gguf`` → ``x.gguf``):
    what a viewer may read of a message written for the operator."""
    return _ABSOLUTE_PATH.sub("", text)


def inert_markdown(text: str) -> str:
    """``text`` as Markdown that fetches nothing: every image (``![alt](url)``, also by
    reference) is escaped to literal text, so showing an imported question never makes the
    viewer's browser request a URL the file's author chose. Raw HTML is escaped by
    ``st.markdown`` itself."""
    return text.replace("![", "!\\[")
