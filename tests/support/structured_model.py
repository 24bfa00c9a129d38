"""The scripted model with structured output, under the names the structured-compaction tests use.

The model is the package's public ``ScriptedModel`` (``strands_semantic_memory.testing``), whose default structured
responder, ``merge_facts``, is the scripted merge these tests were written against (``FACT <key>: <value>`` lines,
the later fact with a key replacing the earlier). This module only keeps the tests' older keyword
(``state_responder=``, now ``structured=``) and record (``state_requests``, now ``structured_requests``); new tests
use the public names.
"""

from __future__ import annotations

from typing import Any

from strands_semantic_memory.testing import (
    ScriptedModel,
    StructuredReply,
    StructuredRequest,
    StructuredResponder,
    archive_indices,
)
from strands_semantic_memory.testing import merge_facts as merging_responder

StateReply = StructuredReply
StateResponder = StructuredResponder

__all__ = ["StateReply", "StateResponder", "StructuredScriptedModel", "archive_indices", "merging_responder"]


class StructuredScriptedModel(ScriptedModel):
    """:class:`ScriptedModel` with ``state_responder=`` for ``structured=`` and ``state_requests`` for its records."""

    def __init__(self, *args: Any, state_responder: StructuredResponder = merging_responder, **kwargs: Any) -> None:
        super().__init__(*args, structured=state_responder, **kwargs)

    @property
    def state_requests(self) -> list[StructuredRequest]:
        """The structured-output calls (``structured_requests``)."""
        return self.structured_requests
