"""What the operator of this installation allows: API endpoints and their keys, the models a
browser may launch, and who may start work from the dashboard.

One TOML file, written by the operator and never by the program: ``operator.toml`` in the
project root, or the file ``ENEM_OPERATOR_CONFIG`` names. Without the file every setting has
its safe default (below). The command line and the dashboard read the same file, so a key
goes to the same places whichever one starts a run.

    [dashboard]
    launch = "local"            # who may start, cancel and remove work from a browser:
                                #   "local": the browser on this machine that opened the
                                #   operator link `make run` printed (the default);
                                #   "operators": only the identities listed below, as the
                                #   authenticating reverse proxy names them (docs/serving.md);
                                #   "never": nobody (a read-only viewer for everyone)
    operators = ["ana@example.org"]
    proxy_secret_env = "ENEM_PROXY_SECRET"   # "operators" only: the variable holding the
                                # secret the proxy sends in X-Enem-Proxy-Secret
    max_concurrent_runs = 1     # background runs working at once; later launches wait

    [models]                    # what the dashboard offers for local (transformers) runs
    folder = "data/models"      # every model folder (config.json) and GGUF file inside it
    hub_ids = ["HuggingFaceTB/SmolLM2-135M-Instruct"]

    [endpoints.vllm]            # an OpenAI-compatible endpoint; its key is read from key_env
    base_url = "http://gpu-box:8000/v1"
    key_env = "VLLM_API_KEY"    # omit for a server that needs no key: no key is sent
    models = ["meta-llama/Llama-2-7b-chat-hf"]   # optional: what the Runs page offers

Keys: an API key is sent only to an endpoint listed here, read from the variable the entry
names. Without an ``[endpoints]`` table the one endpoint is the OpenAI API
(``https://api.openai.com/v1``) with ``OPENAI_API_KEY``, the variable's own home. A run against
any other URL (``enem-llm run --base-url``) sends no key at all.

URLs: a run without a URL goes to the OpenAI API (:func:`request_url`), never to the URL in
``$OPENAI_BASE_URL``: the OpenAI client reads that variable when it is given no URL, and would
send the key paired with the OpenAI API to whatever it names.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CONFIG_ENV_VAR = "ENEM_OPERATOR_CONFIG"
DEFAULT_CONFIG_PATH = PROJECT_ROOT / "operator.toml"
#: Where the OpenAI client sends requests when no base URL is given.
OPENAI_API_URL = "https://api.openai.com/v1"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
#: The OpenAI client's own variable for a URL; this project never reads it (see the docstring).
OPENAI_URL_ENV = "OPENAI_BASE_URL"
#: The models folder when the file names none: ``data/models`` under the project root.
DEFAULT_MODELS_FOLDER = PROJECT_ROOT / "data" / "models"
LAUNCH_POLICIES = ("local", "operators", "never")
#: The header in which an authenticating proxy proves, with the secret it shares with the
#: dashboard's server, that it sent the request (``[dashboard] proxy_secret_env``).
PROXY_SECRET_HEADER = "X-Enem-Proxy-Secret"


def request_url(base_url: str | None) -> str:
    """Where requests of a run with ``base_url`` go: that URL, or the OpenAI API when it is
    None or blank; whatever ``$OPENAI_BASE_URL`` says."""
    given = (base_url or "").strip()
    return given or OPENAI_API_URL


class OperatorConfigError(ValueError):
    """The operator's file cannot be read or holds a setting that makes no sense."""


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint the operator named.

    ``key_env`` is the environment variable holding its key (None: send no key); ``models``
    the model names the Runs page offers (empty: the page asks for a name).
    """

    name: str
    base_url: str
    key_env: str | None = None
    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelAllowList:
    """The local models a browser may launch: everything inside ``folder`` and ``hub_ids``."""

    folder: Path = DEFAULT_MODELS_FOLDER
    hub_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class DashboardAccess:
    """Who may start, cancel and remove work from a browser (see the module docstring)."""

    launch: str = "local"
    operators: tuple[str, ...] = ()
    max_concurrent_runs: int = 1
    #: The server's environment variable holding the secret the authenticating proxy sends
    #: (required by ``launch = "operators"``: without it any local process could name itself).
    proxy_secret_env: str | None = None


@dataclass(frozen=True)
class OperatorConfig:
    """The whole file. ``source`` is the file it was read from (None: the defaults)."""

    endpoints: tuple[Endpoint, ...] = field(default_factory=lambda: _default_endpoints())
    models: ModelAllowList = field(default_factory=ModelAllowList)
    dashboard: DashboardAccess = field(default_factory=DashboardAccess)
    source: Path | None = None

    def endpoint_for_url(self, base_url: str | None) -> Endpoint | None:
        """The configured endpoint ``base_url`` (None: the OpenAI API) is, or None."""
        wanted = normalized_url(request_url(base_url))
        return next((endpoint for endpoint in self.endpoints
                     if normalized_url(endpoint.base_url) == wanted), None)

    def endpoint(self, name: str) -> Endpoint:
        """The endpoint called ``name``; KeyError when there is none."""
        for endpoint in self.endpoints:
            if endpoint.name == name:
                return endpoint
        raise KeyError(name)


def _default_endpoints() -> tuple[Endpoint, ...]:
    """The endpoints of a file without an ``[endpoints]`` table: the OpenAI API with its key
    variable (read from :data:`OPENAI_API_URL` when a config is made)."""
    return (Endpoint("openai", OPENAI_API_URL, OPENAI_KEY_ENV),)


def normalized_url(url: str) -> str:
    """``url`` compared as endpoints are: lower-case scheme and host, default ports dropped,
    no trailing slash (``HTTP://Box:80/v1/`` and ``http://box/v1`` are one endpoint)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url.strip()
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    default_port = {"http": 80, "https": 443}.get(scheme)
    netloc = host if port in (None, default_port) else f"{host}:{port}"
    if ":" in host:  # an IPv6 address keeps its brackets
        netloc = f"[{host}]" if port in (None, default_port) else f"[{host}]:{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def config_path() -> Path:
    """The file read: ``ENEM_OPERATOR_CONFIG`` when set, else ``operator.toml`` in the root."""
    named = os.environ.get(CONFIG_ENV_VAR, "").strip()
    return Path(named) if named else DEFAULT_CONFIG_PATH


def load_operator_config(path: str | os.PathLike | None = None) -> OperatorConfig:
    """The operator's settings from ``path`` (default :func:`config_path`); the defaults when
    the default file does not exist. A file named explicitly (argument or environment) must
    exist. Raises OperatorConfigError for an unreadable file or a bad setting."""
    explicit = path is not None or bool(os.environ.get(CONFIG_ENV_VAR, "").strip())
    file = Path(path) if path is not None else config_path()
    if not file.is_file():
        if explicit:
            raise OperatorConfigError(f"no operator configuration file at {file}")
        return OperatorConfig()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise OperatorConfigError(f"{file}: {error}") from None
    try:
        return config_from_mapping(data, base=file.parent, source=file)
    except OperatorConfigError as error:
        raise OperatorConfigError(f"{file}: {error}") from None


def config_from_mapping(data: Mapping[str, Any], base: Path = PROJECT_ROOT,
                        source: Path | None = None) -> OperatorConfig:
    """An :class:`OperatorConfig` from the file's parsed tables; relative folders are taken
    from ``base`` (the file's folder)."""
    unknown = set(data) - {"dashboard", "models", "endpoints"}
    if unknown:
        raise OperatorConfigError(f"unknown table(s) {', '.join(sorted(unknown))}")
    defaults = OperatorConfig()
    endpoints = (tuple(_endpoint(name, entry) for name, entry
                       in _table(data, "endpoints").items())
                 if "endpoints" in data else defaults.endpoints)
    return OperatorConfig(endpoints=endpoints, models=_models(_table(data, "models"), base),
                          dashboard=_dashboard(_table(data, "dashboard")), source=source)


def _table(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise OperatorConfigError(f"[{name}] must be a table")
    return value


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise OperatorConfigError(f"{what} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _endpoint(name: str, entry: Any) -> Endpoint:
    if not isinstance(entry, Mapping):
        raise OperatorConfigError(f"[endpoints.{name}] must be a table")
    unknown = set(entry) - {"base_url", "key_env", "models"}
    if unknown:
        raise OperatorConfigError(
            f"[endpoints.{name}]: unknown key(s) {', '.join(sorted(unknown))}")
    url = entry.get("base_url")
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") \
            or not urlsplit(url).hostname:
        raise OperatorConfigError(f"[endpoints.{name}] base_url must be an http(s) URL")
    key_env = entry.get("key_env")
    if key_env is not None and (not isinstance(key_env, str) or not key_env.strip()):
        raise OperatorConfigError(f"[endpoints.{name}] key_env must name a variable")
    models = _strings(entry.get("models", []), f"[endpoints.{name}] models")
    return Endpoint(name, url.strip(), key_env.strip() if key_env else None, models)


def _models(table: Mapping[str, Any], base: Path) -> ModelAllowList:
    unknown = set(table) - {"folder", "hub_ids"}
    if unknown:
        raise OperatorConfigError(f"[models]: unknown key(s) {', '.join(sorted(unknown))}")
    folder = table.get("folder")
    if folder is not None and (not isinstance(folder, str) or not folder.strip()):
        raise OperatorConfigError("[models] folder must be a path")
    hub_ids = _strings(table.get("hub_ids", []), "[models] hub_ids")
    return ModelAllowList(folder=(base / folder).resolve() if folder else DEFAULT_MODELS_FOLDER,
                          hub_ids=hub_ids)


def _dashboard(table: Mapping[str, Any]) -> DashboardAccess:
    unknown = set(table) - {"launch", "operators", "max_concurrent_runs", "proxy_secret_env"}
    if unknown:
        raise OperatorConfigError(f"[dashboard]: unknown key(s) {', '.join(sorted(unknown))}")
    launch = table.get("launch", "local")
    if launch not in LAUNCH_POLICIES:
        raise OperatorConfigError(f"[dashboard] launch must be one of {', '.join(LAUNCH_POLICIES)}")
    limit = table.get("max_concurrent_runs", 1)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 64:
        raise OperatorConfigError("[dashboard] max_concurrent_runs must be an integer 1–64")
    operators = _strings(table.get("operators", []), "[dashboard] operators")
    secret_env = table.get("proxy_secret_env")
    if secret_env is not None and (not isinstance(secret_env, str) or not secret_env.strip()):
        raise OperatorConfigError("[dashboard] proxy_secret_env must name an environment "
                                  "variable")
    if launch == "operators" and secret_env is None:
        raise OperatorConfigError("[dashboard] launch = \"operators\" needs proxy_secret_env: "
                                  "the variable holding the secret your proxy sends in "
                                  f"{PROXY_SECRET_HEADER}")
    return DashboardAccess(launch=launch, operators=operators, max_concurrent_runs=limit,
                           proxy_secret_env=secret_env)


@dataclass(frozen=True)
class AllowedModel:
    """One local model a browser may launch: ``label`` is what the page shows (a name inside
    the models folder, or a hub id), ``model`` and ``gguf_file`` what the run is given."""

    label: str
    model: str
    gguf_file: str | None = None


def allowed_models(allow: ModelAllowList) -> list[AllowedModel]:
    """Every model the operator allows: each folder directly inside ``allow.folder`` that holds
    a ``config.json`` (a transformers model), each ``.gguf`` file in such a folder or in the
    models folder itself, then the hub ids. Nothing outside the folder is looked at, and the
    list is the only way a browser names a model."""
    found: list[AllowedModel] = []
    folder = allow.folder
    entries = sorted(folder.iterdir()) if folder.is_dir() else []
    for entry in entries:
        if entry.is_dir():
            if (entry / "config.json").is_file():
                found.append(AllowedModel(entry.name, str(entry)))
            found += [AllowedModel(f"{entry.name}/{gguf.name}", str(entry), gguf.name)
                      for gguf in sorted(entry.glob("*.gguf")) if gguf.is_file()]
        elif entry.suffix == ".gguf" and entry.is_file():
            found.append(AllowedModel(entry.name, str(folder), entry.name))
    found += [AllowedModel(hub_id, hub_id) for hub_id in allow.hub_ids]
    return found
