"""Only the operator clears the server's caches.

Streamlit's "Clear caches" is a message any connected browser can send over its WebSocket
(the toolbar only hides the menu item), and it empties ``st.cache_data`` and
``st.cache_resource`` for every session: one viewer's message made the presentation's next
opening 30 times slower. :func:`guard_cache_clearing` makes Streamlit's handler ignore the
message unless the session's last role check (:data:`dashboard.access.OPERATOR_STATE`) made it
the operator's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from streamlit.runtime.app_session import AppSession

from dashboard.access import OPERATOR_STATE

_log = logging.getLogger(__name__)
#: Marks the handler once it is guarded, so a second call does not wrap it again.
_GUARDED = "_enem_llm_operator_only"


def operator_only(handler: Callable[[Any], None]) -> Callable[[Any], None]:
    """``handler`` (a method of a Streamlit ``AppSession``) run only for a session whose
    state says it may operate; for any other it logs the refusal and does nothing."""

    def guarded(session: Any) -> None:
        state = session._session_state
        if OPERATOR_STATE in state and state[OPERATOR_STATE] is True:
            handler(session)
            return
        _log.warning("A viewer's session asked to clear the caches; refused.")

    setattr(guarded, _GUARDED, True)
    return guarded


def guard_cache_clearing() -> None:
    """Guard Streamlit's cache-clearing handler with :func:`operator_only` (once per server:
    a guarded handler is left as it is)."""
    handler = AppSession._handle_clear_cache_request
    if not getattr(handler, _GUARDED, False):
        AppSession._handle_clear_cache_request = (  # type: ignore[method-assign]
            operator_only(handler))  # type: ignore[assignment]
