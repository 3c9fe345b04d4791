"""The OpenAI backend's API key: which key, if any, goes to an endpoint; checked before any
request.

Apart from ``scorer`` (which imports the OpenAI client) so that a run can be refused for
a missing key before anything is imported, written or sent (``inference.backends.check_backend``).

A key is sent only to an endpoint the operator configured (``inference.operator_config``: the
OpenAI API with ``OPENAI_API_KEY`` unless the operator's file lists others), read from the
variable that endpoint names. Any other URL gets a placeholder that is no secret: whoever runs
the server at that URL learns nothing. A configured endpoint whose variable is unset is refused.
"""

from __future__ import annotations

import os

from inference.backends.base import BackendSettingsError
from inference.operator_config import (
    CONFIG_ENV_VAR,
    OPENAI_KEY_ENV,
    OperatorConfig,
    OperatorConfigError,
    load_operator_config,
)

API_KEY_ENV = OPENAI_KEY_ENV
#: What the client sends where no key may go (it refuses an empty key); not a secret.
NO_KEY = "sk-no-key-sent"


def api_key(base_url: str | None, config: OperatorConfig | None = None) -> str:
    """The key to send to ``base_url`` (None: the OpenAI API): the value of the variable its
    configured endpoint names, else :data:`NO_KEY`. ``config`` defaults to the operator's file.

    Raises BackendSettingsError when the endpoint is configured with a variable that is unset,
    or when the operator's file cannot be read.
    """
    if config is None:
        try:
            config = load_operator_config()
        except OperatorConfigError as error:
            raise BackendSettingsError(str(error)) from None
    endpoint = config.endpoint_for_url(base_url)
    if endpoint is None or endpoint.key_env is None:
        return NO_KEY
    key = os.environ.get(endpoint.key_env, "").strip()
    if not key:
        raise BackendSettingsError(
            f"set {endpoint.key_env} to use endpoint {endpoint.name!r} "
            f"({base_url or 'the OpenAI API'}); endpoints and their key variables are set in "
            f"the operator's file (operator.toml or ${CONFIG_ENV_VAR})")
    return key

