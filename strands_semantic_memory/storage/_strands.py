"""The parts of Strands' storage module that a backend needs but Strands keeps private, in one place.

``InMemoryStorage``, ``LocalFileStorage`` and ``S3Storage`` normalize keys and prefixes with these functions, and
Strands reads these two markers off a storage: ``_namespaced`` (a view already scoped by its caller, which Strands'
``ContextManager``, ``ContextOffloader`` and session manager then use as is) and ``_ephemeral`` (contents lost with
the process, so the ``ContextManager`` also keeps its stash in session snapshots). Using Strands' own functions is
what makes keys behave exactly as in Strands' backends; the conformance tests fail if Strands changes them.
"""

from __future__ import annotations

from strands._context_manager.stash import STASH_PREFIX as _STASH_PREFIX
from strands.storage.storage import _EPHEMERAL, _NAMESPACED, _normalize_key, _normalize_prefix

__all__ = ["EPHEMERAL", "NAMESPACED", "STASH_PREFIX", "normalize_key", "normalize_prefix"]

EPHEMERAL: object = _EPHEMERAL
NAMESPACED: object = _NAMESPACED
STASH_PREFIX: str = _STASH_PREFIX
"""The root of Strands' context stash: ``context/<session id>/scopes/agent/<agent id>/``."""
normalize_key = _normalize_key
normalize_prefix = _normalize_prefix
