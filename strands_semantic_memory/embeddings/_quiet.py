"""Loading a model without the progress bars transformers draws on stderr.

transformers (5.x) draws a "Loading weights" tqdm bar on stderr each time a model is loaded. A library prints
nothing, so the loads this package makes switch transformers' bars off for their duration and then put back the
setting they found. The setting is process-global, so concurrent loads are counted: the first one in records
the caller's setting, the last one out restores it. A bar another thread of the caller starts while one of our
loads is running is silenced too; nothing else is touched (not huggingface_hub's own bars, not logging).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_depth = 0
_saved: bool | None = None


def _transformers_logging() -> Any | None:
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # transformers absent: nothing draws a bar
        return None
    if not hasattr(transformers_logging, "_tqdm_active"):  # another transformers layout: leave it alone
        return None
    return transformers_logging


@contextlib.contextmanager
def quiet_model_loading() -> Iterator[None]:
    """Silence transformers' progress bars inside the block, then restore the caller's setting.

    Only transformers' own switch (what ``transformers.utils.logging.is_progress_bar_enabled()`` reports) is
    changed, not huggingface_hub's bars, whose reset would drop per-group settings the caller may have made.

    Yields:
        Nothing; the bars are off until the last concurrent block exits.
    """
    global _depth, _saved
    module = _transformers_logging()
    if module is None:
        yield
        return
    with _lock:
        if _depth == 0:
            _saved = bool(module._tqdm_active)
            module._tqdm_active = False
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                module._tqdm_active = _saved
                _saved = None
