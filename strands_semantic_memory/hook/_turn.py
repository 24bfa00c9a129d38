"""What the hook keeps per agent, per user turn and per model call, and how it recognises a user turn.

``Enrichment`` is public (``SemanticMemoryHook.enrichment(agent)``, ``last_enrichment``); ``Turn``, ``AgentState``,
``Selection`` (the passages chosen for a call) and ``View`` (what a call receives) are the hook's records. A
``Turn`` changes only through its own methods: the search's result (``found``), a context overflow (``shrink``) and
what a call was finally sent with (``sent``), in that order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from strands.types.content import ContentBlock, Message

from strands_semantic_memory.retrieval._passages import Passage
from strands_semantic_memory.retrieval._recall import Recollection
from strands_semantic_memory.retrieval._relevance import Relevance

if TYPE_CHECKING:
    from strands_semantic_memory.budget import ContextBudget
    from strands_semantic_memory.hook._options import InjectWhen

__all__ = ["AgentState", "Enrichment", "Selection", "Turn", "View", "is_text_block", "position_of", "user_text"]


@dataclass(kw_only=True)
class Enrichment:
    """What the hook did for one user turn.

    Attributes:
        query: The user's words that were searched for.
        passages: The passages injected into the turn's latest model call, in conversation order.
        left_out: Passages found but left out to respect the budgets (characters, tokens, or the room left after a
            context overflow).
        text: The full text the user's turn was sent with on the latest model call (empty when nothing was
            injected). The agent's history keeps the user's own words.
        elapsed_ms: Time spent searching and formatting for the turn's first model call.
        tokens: Estimated tokens of the injected lines (four characters per token); 0 when nothing was injected.
        overflow_retries: Model calls of this turn retried with less or no injected context after the model
            reported a context overflow.
        error: Why the search failed, when it did (the turn was then sent without earlier context).
        relevance: How much the turn resembled the archive: ``"relevant"`` (up to the budget), ``"uncertain"``
            (at most the budget's ``uncertain_memory_tokens``), ``"unrelated"`` (nothing injected; what was found
            is in ``left_out``), ``"unknown"`` (no similarity to judge by: a lexical search, or an embedder that is
            down; treated as uncertain), or ``"always"`` (the hook injects on every turn: ``inject_when="always"``).
        best_similarity: The turn's cosine similarity to its nearest archived message, when known.
        floor: The archive's relevance floor (how close generic questions get), when known.
        cut: Hits left out because they scored under the relative cut (a share of the best hit's score).
    """

    query: str
    passages: list[Passage] = field(default_factory=list)
    left_out: list[Passage] = field(default_factory=list)
    text: str = ""
    elapsed_ms: float = 0.0
    tokens: int = 0
    overflow_retries: int = 0
    error: str | None = None
    relevance: Relevance | Literal["always"] = "unknown"
    best_similarity: float | None = None
    floor: float | None = None
    cut: int = 0


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Passages chosen for one call (conversation order), those left out, the body text and its tokens (0: none)."""

    chosen: list[Passage]
    left_out: list[Passage]
    body: str
    tokens: int


@dataclass(kw_only=True)
class View:
    """What one model call receives, and what the hook put into it.

    Attributes:
        messages: The messages to send.
        selection: The choice the turn's block was written from (the turn keeps it for its later calls).
        chosen: Passages injected into the turn's message (conversation order).
        left_out: Passages found but not injected.
        text: The turn's text as sent (the block, then the user's words); empty when nothing was injected.
        body_chars: Characters of the injected lines.
        body_tokens: Their estimated tokens (0: none).
        kept_used: Whether kept context of earlier turns was put into the call.
        turn_content: The turn's content with the block (what ``keep_injected_context`` keeps), when injected.
        extra_tokens: What keeping this block costs later calls, in tokens.
    """

    messages: list[Message]
    selection: Selection | None = None
    chosen: list[Passage] = field(default_factory=list)
    left_out: list[Passage] = field(default_factory=list)
    text: str = ""
    body_chars: int = 0
    body_tokens: int = 0
    kept_used: bool = False
    turn_content: list[ContentBlock] | None = None
    extra_tokens: int = 0

    @property
    def injected(self) -> bool:
        """Whether the hook changed anything in this call's messages."""
        return bool(self.chosen) or self.kept_used


@dataclass(kw_only=True)
class Turn:
    """One user turn: the user's message (recognised by identity), what the search found, and its caps.

    Attributes:
        message: The user's message, the object in ``agent.messages``.
        query: Its text, searched for.
        searched: Whether the search ran (once per turn; tool loops reuse it).
        passages: What the search found, in conversation order.
        enrichment: What the turn's calls were sent with (None until the search ran and found an archive).
        char_cap: Characters the injected lines may take, lowered after a context overflow.
        token_cap: Tokens likewise.
        without_context: Set after a second overflow: nothing is injected for the rest of the turn.
        sent_content: The turn's content of the latest call that succeeded with injected context, and its extra
            tokens (what ``keep_injected_context`` keeps).
        selection: The choice the turn's latest call was sent with: sent again unchanged while it fits.
    """

    message: Message
    query: str
    searched: bool = False
    passages: list[Passage] = field(default_factory=list)
    enrichment: Enrichment | None = None
    char_cap: int | None = None
    token_cap: int | None = None
    without_context: bool = False
    sent_content: tuple[list[ContentBlock], int] | None = None
    selection: Selection | None = None

    def found(
        self, found: Recollection, enrichment: Enrichment | None, *, inject_when: InjectWhen, budget: ContextBudget
    ) -> None:
        """Record the search's result (``enrichment`` None: nothing archived yet), and what the turn is worth.

        With ``inject_when="relevant"``, an unrelated turn keeps nothing (what was found is left out), and an
        uncertain or unknown one at most the budget's ``uncertain_memory_tokens``.
        """
        self.searched = True
        self.passages = found.passages
        self.enrichment = enrichment
        if enrichment is None:
            return
        enrichment.best_similarity, enrichment.floor, enrichment.cut = found.best_similarity, found.floor, found.cut
        if inject_when == "always":
            enrichment.relevance = "always"
            return
        enrichment.relevance = found.relevance
        if found.relevance == "unrelated":
            enrichment.left_out, self.passages = self.passages, []
        elif found.relevance != "relevant":
            self.token_cap = budget.uncertain_memory_tokens

    def shrink(self, view: View) -> None:
        """After a context overflow: half the injected lines; after another one, none."""
        self.selection = None
        if view.chosen and self.char_cap is None:
            self.char_cap = view.body_chars // 2
            self.token_cap = view.body_tokens // 2
        elif view.chosen or not view.kept_used:
            self.without_context = True

    def sent(self, view: View | None, retries: int) -> Enrichment | None:
        """Note what the call was finally sent with in the turn's enrichment; returns it (None: no enrichment)."""
        enrichment = self.enrichment
        if enrichment is None:
            return None
        enrichment.overflow_retries += retries
        if view is None or not view.chosen:
            enrichment.left_out = view.left_out if view is not None and view.left_out else list(self.passages)
            enrichment.passages, enrichment.text, enrichment.tokens = [], "", 0
            self.sent_content = None
        else:
            self.selection = view.selection
            enrichment.passages, enrichment.left_out = view.chosen, view.left_out
            enrichment.text, enrichment.tokens = view.text, view.body_tokens
            self.sent_content = (view.turn_content, view.extra_tokens) if view.turn_content is not None else None
        return enrichment


@dataclass(kw_only=True)
class AgentState:
    """What the hook keeps for one agent (a hook may serve several).

    Attributes:
        turn: The current user turn, if any.
        kept: ``keep_injected_context``: id(user message) -> (the message, the content it was sent with, its extra
            tokens).
        without_kept: Set after an overflow in this invocation: earlier turns' kept context is left out.
        registered: Whether the model-call middleware is registered with the agent.
        last_enrichment: What the hook did for the agent's latest user turn (None before one, or when nothing was
            archived yet).
    """

    turn: Turn | None = None
    kept: dict[int, tuple[Message, list[ContentBlock], int]] = field(default_factory=dict)
    without_kept: bool = False
    registered: bool = False
    last_enrichment: Enrichment | None = None


def is_text_block(block: Any) -> bool:
    """Whether ``block`` is a text content block."""
    return isinstance(block, dict) and "text" in block


def user_text(message: Message) -> str | None:
    """The text of a user turn the hook acts on, or None (tool results, assistant turns, non-text turns).

    Nothing in the message's metadata is read: a message's fields never change what the hook does.
    """
    if message.get("role") != "user":
        return None
    content = message.get("content") or []
    if any(isinstance(b, dict) and ("toolResult" in b or "toolUse" in b) for b in content):
        return None
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    text = "\n".join(t for t in texts if t.strip())
    return text or None


def position_of(messages: Sequence[Message], message: Message) -> int | None:
    """Where ``message`` (the object itself, not an equal copy) is in ``messages``, searching from the end."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is message:
            return i
    return None
