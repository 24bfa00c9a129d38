"""What one model call receives: the turn's message carrying its block, plus kept blocks of earlier turns.

``build_view`` reads the call's plan and the agent's state and returns a ``View``: the messages to send and what the
hook put into them. It changes nothing; the hook applies a view's consequences (``Turn.shrink``, ``Turn.sent``).

The block a turn's first call was sent with is sent unchanged, byte for byte, on the turn's later calls (a tool loop)
as long as it fits the room each call leaves, so a provider's prompt cache can serve it (with Amazon Bedrock:
``BedrockModel(cache_config=CacheConfig(strategy="auto"))`` puts a cache point on the latest user message, so the
calls after a tool's result read the turn's block from the cache); only a call with less room gets a smaller choice.
"""

from __future__ import annotations

import logging

from strands.middleware import InvokeModelContext
from strands.types.content import ContentBlock, Message

from strands_semantic_memory.budget import estimate_tokens
from strands_semantic_memory.formatting._block import context_block
from strands_semantic_memory.hook._plan import CallPlan
from strands_semantic_memory.hook._selection import fits, select_passages
from strands_semantic_memory.hook._turn import AgentState, View, is_text_block, position_of

__all__ = ["build_view", "content_with_block"]

logger = logging.getLogger(__name__)


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


def build_view(plan: CallPlan, context: InvokeModelContext, state: AgentState) -> View | None:
    """The messages for this call: the turn's message with its block, and kept blocks of earlier turns.

    Returns:
        The view, or None when other middleware added or removed messages (then nothing is injected).
    """
    agent_messages = context.agent.messages
    if len(context.messages) != len(agent_messages):
        logger.debug("messages were added or removed by other middleware; nothing injected into this call")
        return None
    messages = list(context.messages)
    kept_used, kept = False, 0
    if state.kept and not state.without_kept:
        positions = {id(m): i for i, m in enumerate(agent_messages)}
        for key, (original, content, extra) in state.kept.items():
            i = positions.get(key)
            if i is not None and agent_messages[i] is original and messages[i].get("role") == "user":
                messages[i] = {**messages[i], "content": list(content)}
                kept_used, kept = True, kept + extra
    turn = state.turn
    if turn is None or turn.without_context or not turn.passages:
        return View(messages=messages, kept_used=kept_used)
    position = position_of(agent_messages, turn.message)
    if position is None or messages[position].get("role") != "user":
        return View(messages=messages, kept_used=kept_used)  # the turn's message left the context (reduced away)
    selection = turn.selection
    if selection is None or not fits(plan, selection, kept=kept, char_cap=turn.char_cap, token_cap=turn.token_cap):
        selection = select_passages(plan, turn.passages, kept=kept, char_cap=turn.char_cap, token_cap=turn.token_cap)
    if not selection.chosen:
        return View(messages=messages, kept_used=kept_used, left_out=selection.left_out)
    text = context_block(selection.body, turn.query)
    messages[position] = {**messages[position], "content": content_with_block(turn.message, messages[position], text)}
    extra = 0
    if plan.options.keep_injected_context:  # what keeping this block costs later calls, in tokens
        extra = max(0, estimate_tokens(text) - estimate_tokens(turn.query))
    return View(
        messages=messages,
        selection=selection,
        chosen=selection.chosen,
        left_out=selection.left_out,
        text=text,
        body_chars=len(selection.body),
        body_tokens=selection.tokens,
        kept_used=kept_used,
        # What keep_injected_context keeps: the block and the user's own other blocks, not other middleware's.
        turn_content=content_with_block(turn.message, turn.message, text),
        extra_tokens=extra,
    )
