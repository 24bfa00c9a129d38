"""Build what one model call receives, and shrink it after a context overflow.

The hook's middleware (``_invoke_model``) asks ``build_view`` for the messages of each
model call: the turn's message carrying its block, plus kept blocks of earlier turns. On a context overflow
``shrink`` halves the injected lines, then removes them; ``record_view`` notes what was finally sent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from strands.middleware import InvokeModelContext
from strands.types.content import ContentBlock, Message

from strands_semantic_memory.budget import estimate_tokens, history_tokens
from strands_semantic_memory.formatting._block import context_block
from strands_semantic_memory.hook._selection import InjectionSettings, select_passages, tracking_ids
from strands_semantic_memory.hook._turn import AgentState, Enrichment, Turn, is_text_block, position_of
from strands_semantic_memory.retrieval._passages import Passage

__all__ = ["View", "build_view", "content_with_block", "record_view", "shrink"]

logger = logging.getLogger(__name__)


@dataclass
class View:
    """What one model call receives: the messages, and what the hook put into them."""

    messages: list[Message]
    chosen: list[Passage]
    dropped: list[Passage]
    text: str
    body_chars: int
    body_tokens: int | None
    kept_used: bool
    turn_content: list[ContentBlock] | None
    extra_tokens: int

    @property
    def injected(self) -> bool:
        """Whether the hook changed anything in this call's messages."""
        return bool(self.chosen) or self.kept_used


def content_with_block(own: Message, sent: Message, text: str) -> list[ContentBlock]:
    """The turn's content for this call: the block (ending with the user's words) replaces the user's text.

    The user's other blocks (images, documents) follow, then anything other middleware appended.
    """
    own_content = list(own.get("content") or [])
    sent_content = list(sent.get("content") or [])
    count = len(own_content)
    if sent_content[:count] == own_content:
        rest = [b for b in sent_content[:count] if not is_text_block(b)] + sent_content[count:]
    else:
        rest = [b for b in sent_content if not is_text_block(b)]
    return [{"text": text}, *rest]


async def build_view(settings: InjectionSettings, context: InvokeModelContext, state: AgentState) -> View | None:
    """The messages for this call: the turn's message with its block, and kept blocks of earlier turns.

    Returns:
        The view, or None when other middleware added or removed messages (then nothing is injected).
    """
    agent_messages = context.agent.messages
    if len(context.messages) != len(agent_messages):
        logger.debug("messages were added or removed by other middleware; nothing injected into this call")
        return None
    turn = state.turn
    messages = list(context.messages)
    kept_used, kept_extra = False, 0
    if state.kept and not state.without_kept:
        positions = {id(m): i for i, m in enumerate(agent_messages)}
        for key, (original, content, extra) in state.kept.items():
            i = positions.get(key)
            if i is not None and agent_messages[i] is original and messages[i].get("role") == "user":
                messages[i] = {**messages[i], "content": list(content)}
                kept_used, kept_extra = True, kept_extra + extra
    view = View(messages, [], [], "", 0, None, kept_used, None, kept_extra)
    if turn is None or turn.without_context or not turn.passages:
        return view
    position = position_of(agent_messages, turn.message)
    if position is None or messages[position].get("role") != "user":
        return view  # the turn's message left the context (reduced away): nothing to attach the block to
    used = history_tokens(context.messages, context.system_prompt)
    selection = select_passages(settings, context.model, used, turn, kept_extra, tracking_ids(context.messages))
    view.dropped = selection.dropped
    if not selection.chosen:
        return view
    text = context_block(selection.body, turn.query)
    content = content_with_block(turn.message, messages[position], text)
    messages[position] = {**messages[position], "content": content}
    extra = 0
    if settings.keep_injected_context:  # what keeping this block costs later calls, in tokens
        extra = max(0, estimate_tokens(text) - estimate_tokens(turn.query))
    view.chosen, view.text, view.body_chars, view.body_tokens = (
        selection.chosen,
        text,
        len(selection.body),
        selection.tokens,
    )
    # What keep_injected_context keeps: the block and the user's own other blocks, not other middleware's.
    view.turn_content, view.extra_tokens = content_with_block(turn.message, turn.message, text), extra
    return view


def shrink(state: AgentState, view: View) -> None:
    """After an overflow: no kept context and half the injected lines; after another one, nothing."""
    turn = state.turn
    state.without_kept = True
    if turn is None:
        return
    if view.chosen and turn.char_cap is None:
        turn.char_cap = view.body_chars // 2
        if view.body_tokens is not None:
            turn.token_cap = view.body_tokens // 2
    elif view.chosen or not view.kept_used:
        turn.without_context = True


def record_view(turn: Turn, view: View | None, retries: int) -> Enrichment | None:
    """Note in the turn's enrichment what the call was finally sent with; returns that enrichment (or None)."""
    enrichment = turn.enrichment
    if enrichment is None:
        return None
    enrichment.overflow_retries += retries
    if view is None or not view.chosen:
        enrichment.left_out = view.dropped if view is not None and view.dropped else list(turn.passages)
        enrichment.passages, enrichment.text, enrichment.tokens = [], "", None
        turn.sent = None
    else:
        enrichment.passages, enrichment.left_out = view.chosen, view.dropped
        enrichment.text, enrichment.tokens = view.text, view.body_tokens
        turn.sent = (view.turn_content, view.extra_tokens) if view.turn_content is not None else None
    return enrichment
