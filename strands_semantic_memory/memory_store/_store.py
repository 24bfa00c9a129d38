"""SemanticMemoryStore: the archive as a Strands ``MemoryStore``, for ``Agent(memory_manager=MemoryManager(...))``.

Strands' ``MemoryManager`` searches its stores for every user turn (injecting the results
for that one model call, never into history), gives the model a ``search_memory`` tool, and, for a writable store
with extraction, hands it the conversation's messages in batches. This store answers with the engine's hybrid
search, as merged passages of verbatim messages, and archives the batches verbatim, without any model call.

Strands escapes each entry as XML text, so an entry's own framing uses no ``<``, ``>`` or ``&`` (archived lines
are quoted with ``"| "``), and messages the agent still has in its context are left out (the model sees them
already). ``last_enrichment`` says what the last search returned and what it left out, and why.

Example:
    ```python
    from strands import Agent
    from strands.memory import MemoryManager
    from strands_semantic_memory import SemanticMemoryStore

    store = SemanticMemoryStore()
    agent = Agent(memory_manager=MemoryManager(stores=[store]))
    ```
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
import uuid
from typing import TYPE_CHECKING, Literal

from strands.memory.extraction.types import ExtractionConfig
from strands.memory.types import AddMessagesContext, MemoryEntry, MemoryStore, Metadata, SearchOptions
from strands.types.content import Message
from strands.types.tools import AgentTool
from typing_extensions import Unpack

from strands_semantic_memory._validation import check_flag, check_instance, check_int, check_score, check_text
from strands_semantic_memory.budget import ContextBudget, agent_budget, model_window
from strands_semantic_memory.engine._memory import MemorySources, SemanticMemory
from strands_semantic_memory.engine._options import BUILT_MEMORY_EMBEDDING, DEFAULT_TOP_K, MemoryTunables
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.memory_store._active_context import ActiveContext
from strands_semantic_memory.memory_store._agent import AgentLink
from strands_semantic_memory.memory_store._entries import LeftOut, StoreEnrichment, entry
from strands_semantic_memory.memory_store._extraction import aware_of_agent, keyed, resolve_extraction
from strands_semantic_memory.memory_store._fit import call_tokens, fit_passages, injected_tokens
from strands_semantic_memory.messages._session import agent_scope, session_of
from strands_semantic_memory.retrieval._passages import Passage, subset_passage
from strands_semantic_memory.retrieval._recall import Recollection
from strands_semantic_memory.retrieval._relevance import DEFAULT_INJECT_WHEN, DEFAULT_RULE, INJECT_WHEN, InjectWhen
from strands_semantic_memory.tools._conversation_tools import DEFAULT_MAX_OUTPUT_CHARS, memory_tools

if TYPE_CHECKING:
    from strands.agent.agent import Agent

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_DESCRIPTION", "INJECT_WHEN", "InjectWhen", "NewMemoryArguments", "SemanticMemoryStore"]

DEFAULT_DESCRIPTION = (
    "Verbatim archive of this conversation, including what was summarized away: earlier messages, tool calls and "
    "their results, found by meaning and keywords, each with its neighbouring messages."
)

_IN_CONTEXT_LOOKAHEAD = 50
"""At most this many extra hits are searched for, to replace hits the agent still has in its context."""


class NewMemoryArguments(MemoryTunables, MemorySources, total=False):
    """What ``SemanticMemoryStore`` passes on to the memory it creates.

    ``context_radius`` and ``min_score`` are the store's own keywords: they apply to its searches.
    """

    top_k: int
    max_num_archived_messages: int | None
    max_memory_archived_messages: int | None


class SemanticMemoryStore(MemoryStore):
    """A Strands ``MemoryStore`` over a ``SemanticMemory``.

    **Search** returns merged passages, most relevant first: each ``MemoryEntry``
    holds one passage's messages, a ``[Message N, role]`` line before each and every archived line quoted with
    ``"| "``; its metadata holds ``indices``, ``roles``, ``timestamps`` (epoch seconds: when said if known, else
    when archived), ``hit_indices``, ``start``, ``end`` and ``score``. Each entry is bounded (``max_entry_chars``).
    Strands' ``MemoryManager`` escapes entries as XML text; nothing in an entry's own framing is escaped (a
    ``"> "`` quote would reach the model as ``"&gt; "``), so the model reads the archived text as it was said.

    **What the model already sees is left out.** Messages still in the agent's active context are removed from
    the passages, and a passage whose hits are all still in context is not returned (more hits are searched for to
    take its place). Strands gives a store's search only the query; the store learns its agent when
    ``MemoryManager`` attaches the store's extraction trigger, so this applies to a writable store with
    extraction (the default for a store that owns its memory). A read-only store over a conversation manager's
    archive needs no such check: that manager archives only messages that leave the context.
    ``last_enrichment`` records each search: the entries, the passages behind them, what was left out and why.

    **The entries fit the model call.** A store that knows its agent sizes what it returns to a ``ContextBudget``:
    at most ``memory_share`` of the model's ``context_window_limit``, and never more than the room the call leaves
    (the window less the reply's share, the history, the system prompt and the tool specs), counted as Strands'
    default format injects the entries (escaped, each in its ``<entry>`` element). Within that room, the hits of
    the passages found come first, best first, then their neighbours, nearest first (``pack_passages``, as the hook
    does); a passage none of whose messages fit is left out (reason ``"budget"``). The number of entries stays
    within Strands' ``max_search_results`` (``max_entries`` for injection): one entry is one passage.

    **Only turns that need the past get it.** For Strands' injection the store asks the engine how much the turn
    resembles the archive (``SemanticMemory.recall``: the turn's best similarity against the archive's floor, how
    close generic questions get): an ``"unrelated"`` turn gets no entries, an ``"uncertain"`` or ``"unknown"`` one
    at most the budget's ``uncertain_memory_tokens``, a ``"relevant"`` one its budget; and hits scoring under a
    share of the best hit's score are left out (the relative cut). A search the model asks for (Strands'
    ``search_memory`` tool) or the application makes is never gated. ``inject_when="always"`` turns the gate off
    (the hook's option of the same name). The store tells injection from a requested search by the agent's events
    (a model call under way, no tool call running), so the gate applies to a store that knows its agent.

    **An overflow ends with less, then nothing.** When a model call of its agent fails with a context overflow (a
    model whose real limit is below its declared window: four characters per token is far off for CJK text or
    code), the store injects at most half of what it injected into that call for the rest of the invocation, and
    nothing after a second overflow; the next invocation starts afresh. So a conversation manager that reduces
    the history and retries never meets the same block again, and no retry loop is unbounded.

    **Writing.** A writable store archives what Strands hands to ``add_messages`` verbatim, with no model
    call (server-side extraction in Strands' terms). Its default extraction config runs after every invocation and
    *keeps tool traffic*: Strands' default filter would strip ``toolUse``/``toolResult`` blocks, so the store sets
    ``filter=MemoryMessageFilter(exclude=[])`` (``KEEP_TOOL_TRAFFIC``) unless you pass your own filter.
    Batches are idempotent across retries: each message is keyed by ``AddMessagesContext.sequence_numbers``
    combined with an id unique to the agent run (renewed by ``initialize``, which Strands calls when the
    agent is built), so a retried batch is not archived twice, while two messages with the same text are both
    archived. A store serves one agent (it keeps that agent's context, budget and overflows): a second live agent is
    refused with ``ConfigurationError``; build one store per agent (several stores may share one memory). A store
    that builds its memory embeds in the background (``embedding="background"``): a batch is committed, and
    searchable by its words, when ``add_messages`` returns, and a thread embeds it off the agent's turn
    (``memory.embed_pending()`` waits for the vectors). ``close`` stops that thread, then closes the archive.

    **Tools.** ``get_tools`` returns ``conversation_search`` and ``conversation_read``, which the ``MemoryManager``
    registers on the agent. Deletion is the developer's choice: ``allow_forget=True`` adds ``conversation_forget``,
    which deletes archived messages for good (archived text is untrusted, so a destructive tool is never offered
    by default).

    **Sharing an archive.** ``SemanticMemoryStore(memory=manager.memory)`` serves the archive that a
    ``SemanticSummarizingConversationManager`` fills (and its hook
    searches). Such a store is read-only by default: the manager already archives every message that leaves the
    context, and Strands' extraction strips the tracking ids that would let the two paths recognise the same
    message, so archiving on both paths would store it twice. Pass ``writable=True`` to archive every message as
    it is said as well.

    Engine calls are synchronous (embedding, database round trips); they run in a worker thread
    (``to_thread``) so the agent's event loop is never blocked.
    """

    def __init__(
        self,
        memory: SemanticMemory | None = None,
        *,
        name: str = "conversation_archive",
        description: str | None = DEFAULT_DESCRIPTION,
        max_search_results: int | None = DEFAULT_TOP_K,
        writable: bool | None = None,
        extraction: ExtractionConfig | bool | None = None,
        context_radius: int | None = None,
        min_score: float | None = None,
        max_entry_chars: int = 4000,
        show_dates: bool = False,
        tools: bool = True,
        allow_forget: bool = False,
        budget: ContextBudget | None = None,
        inject_when: InjectWhen = DEFAULT_INJECT_WHEN,
        **memory_options: Unpack[NewMemoryArguments],
    ) -> None:
        """Create the store.

        Args:
            memory: The memory to serve (for example ``manager.memory``). Default: a new
                ``SemanticMemory`` built from ``memory_options``.
            name: The store's name in Strands (unique per ``MemoryManager``).
            description: Shown to the model in the ``search_memory`` tool's description.
            max_search_results: Passages per search when the caller does not say (Strands' option).
            writable: Archive the messages Strands hands over. Default: True for a memory this store creates,
                False for a memory you pass (its manager archives it already; see the class docstring).
            extraction: Strands' extraction setting for a writable store. Default (None or True): after every
                invocation, keeping tool traffic. An ``ExtractionConfig`` you pass gets the same trigger and filter
                defaults for the fields it leaves out. False: no automatic archiving.
            context_radius: Neighbours around each hit (default: the memory's).
            min_score: Minimum cosine similarity of a hit (default: the memory's).
            max_entry_chars: Size bound of one entry's content, in characters (at least 200).
            show_dates: Put each message's date in its label.
            tools: Return the conversation tools (``conversation_search``, ``conversation_read`` and, with
                ``allow_forget``, ``conversation_forget``) from ``get_tools``, so the ``MemoryManager``
                registers them on the agent.
            allow_forget: Give the model ``conversation_forget`` too, which deletes archived messages for good.
                Off by default: deletion is something the developer turns on.
            budget: How the model's window is shared, for sizing what a search returns (see the class docstring).
                Default: the budget of the agent's conversation manager when it has one (this library's manager),
                else ``ContextBudget()`` (memory 0.5 of the window, reply 0.05). Applies when the store knows its
                agent (a writable store with extraction).
            inject_when: ``"relevant"`` (default): Strands' injection gets entries only for a turn that resembles
                the archive (see the class docstring); ``"always"``: every turn, up to the budget.
            **memory_options: Options for the new ``SemanticMemory`` (``embedding_model``, ``archive``,
                ``archive_path``, ...). ``embedding`` defaults to ``"background"`` here (``"inline"``: a batch is
                embedded before ``add_messages`` returns). Not allowed together with ``memory``.

        Raises:
            ConfigurationError: If an option has the wrong type or is out of range (the message names the option
                and the value), or ``memory`` and ``memory_options`` are both given.
        """
        if memory is not None and memory_options:
            raise ConfigurationError(
                f"pass either memory= or options for a new memory, not both (got {sorted(memory_options)})"
            )
        check_instance("memory", memory, SemanticMemory, "a SemanticMemory (for example manager.memory) or None")
        check_text("name", name)
        check_text("description", description, optional=True)
        check_int("max_search_results", max_search_results, minimum=1, optional=True)
        check_int("max_entry_chars", max_entry_chars, minimum=200)
        if writable is not None:
            check_flag("writable", writable)
        check_int("context_radius", context_radius, minimum=0, optional=True)
        min_score = check_score("min_score", min_score)
        for flag, value in (("show_dates", show_dates), ("tools", tools), ("allow_forget", allow_forget)):
            check_flag(flag, value)
        check_instance("budget", budget, ContextBudget, "a ContextBudget or None")
        if inject_when not in INJECT_WHEN:
            raise ConfigurationError(f"inject_when must be one of {list(INJECT_WHEN)}, got {inject_when!r}")
        owns_memory = memory is None
        if memory is None:
            memory_options.setdefault("embedding", BUILT_MEMORY_EMBEDDING)
            memory = SemanticMemory(**memory_options)
        self._memory: SemanticMemory = memory
        self._owns_memory = owns_memory
        self.name: str = name
        self.description: str | None = description
        self.max_search_results: int | None = max_search_results
        self.writable: bool = owns_memory if writable is None else writable
        if extraction not in (None, False) and not self.writable:
            raise ConfigurationError("extraction needs a writable store: pass writable=True")
        self.extraction: ExtractionConfig | bool | None = (
            aware_of_agent(resolve_extraction(extraction, self.writable), self._serve) if self.writable else None
        )
        self.context_radius = context_radius
        self.min_score = min_score
        self.max_entry_chars = max_entry_chars
        self.show_dates = show_dates
        self._tools = tools
        self._allow_forget = allow_forget
        self.budget: ContextBudget | None = budget
        self.inject_when: InjectWhen = inject_when
        self._run_id = uuid.uuid4().hex
        self._link: AgentLink | None = None
        self._warned_squeezed = False
        self.last_enrichment: StoreEnrichment | None = None
        """What the last search returned and left out (None before the first search)."""

    def _serve(self, agent: Agent) -> None:
        """Serve ``agent`` (its ``MemoryManager`` attached the store's extraction trigger).

        Raises:
            ConfigurationError: If the store already serves another agent that is still alive.
        """
        link = self._link
        if link is not None and link.agent is agent:
            return
        if link is not None and link.agent is not None:
            gc.collect()  # an agent nobody holds any more may only wait for the cycle collector
        if link is not None and link.agent is not None:
            raise ConfigurationError(
                f"this SemanticMemoryStore ({self.name!r}) already serves another agent, and keeps that agent's "
                "context, budget and overflows: build one store per agent (several stores may share one memory: "
                "SemanticMemoryStore(memory=first_store.memory, writable=True))"
            )
        self._link = AgentLink(agent)

    def _serving(self) -> Agent | None:
        """The agent this store serves, when it knows it (and the agent still exists)."""
        return self._link.agent if self._link is not None else None

    def _active_context(self, agent: Agent | None) -> ActiveContext | None:
        """The serving agent's context, or None when the store does not know its agent."""
        if agent is None:
            return None
        exclude: set[str] = set()
        if isinstance(self.extraction, dict) and "filter" in self.extraction:
            exclude = set(self.extraction["filter"].exclude)
        return ActiveContext(list(agent.messages), exclude)

    @property
    def memory(self) -> SemanticMemory:
        """The ``SemanticMemory`` this store serves."""
        return self._memory

    async def initialize(self) -> None:
        """Start a new agent run: Strands numbers extraction batches from 0 again for each agent it builds."""
        self._run_id = uuid.uuid4().hex

    # ------------------------------------------------------------------ search

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        """Find the archived passages most relevant to ``query``, leaving out what the agent still has in context.

        Args:
            query: What to look for.
            options: Strands' search options (``max_search_results``: how many passages at most).

        Returns:
            One entry per merged passage, most relevant first (see the class docstring). For Strands' injection,
            only as much as the turn's relevance and the invocation's overflows allow. The search is recorded in
            ``last_enrichment``.

        Raises:
            ConfigurationError: If ``max_search_results`` is not an integer >= 1 (a ``ValueError`` too).
        """
        requested = options.get("max_search_results") if options else None
        check_int("max_search_results", requested, minimum=1, optional=True)
        limit = requested or self.max_search_results or DEFAULT_TOP_K
        link = self._link
        injecting = link is not None and link.injecting
        gated = injecting and self.inject_when == "relevant"
        if not isinstance(query, str) or not query.strip():
            text = query if isinstance(query, str) else ""
            self.last_enrichment = StoreEnrichment(query=text, source=_source(injecting), gated=gated)
            return []
        started = time.perf_counter()
        agent = self._serving()
        active = self._active_context(agent)
        extra = min(active.size, _IN_CONTEXT_LOOKAHEAD) if active else 0
        found: Recollection = await asyncio.to_thread(
            self._memory.recall,
            query,
            top_k=limit + extra,
            context_radius=self.context_radius,
            min_score=self.min_score,
            cut=DEFAULT_RULE.cut if gated else 0.0,
            sessions=agent_scope(self._memory.user_id, agent),
        )
        record = StoreEnrichment(
            query=query,
            source=_source(injecting),
            gated=gated,
            relevance=found.relevance,
            best_similarity=found.best_similarity,
            floor=found.floor,
            cut=found.cut,
        )
        passages, cap = self._allowed(record, found, agent, link if injecting else None)
        in_context: set[int] = set()
        for passage in sorted(passages, key=lambda w: (-w.score, w.start)):
            shown = passage
            if active:
                kept = [p for p, message in enumerate(passage.messages) if not active.holds(message)]
                in_context.update(i for p, i in enumerate(passage.indices) if p not in kept)
                if not set(passage.hit_indices) & {passage.indices[p] for p in kept}:
                    record.left_out.append(LeftOut(passage, "in_context"))
                    continue
                if len(kept) < len(passage.messages):
                    shown = subset_passage(passage, kept, score=passage.score)
            if len(record.passages) >= limit:
                record.left_out.append(LeftOut(passage, "max_search_results"))
                continue
            record.passages.append(shown)
        if agent is not None:
            self._fit(agent, record, cap)
        record.entries = [
            entry(passage, self.max_entry_chars, show_dates=self.show_dates) for passage in record.passages
        ]
        record.tokens = injected_tokens(record.entries, self.name)
        record.in_context_indices = sorted(in_context)
        record.elapsed_ms = (time.perf_counter() - started) * 1000
        if injecting and link is not None:
            link.injected(record.tokens)
        self.last_enrichment = record
        logger.debug(
            "store=<%s>, source=<%s>, relevance=<%s>, entries=<%d>, tokens=<%d>, in_context=<%d> | searched the "
            "archive",
            self.name,
            record.source,
            record.relevance,
            len(record.entries),
            record.tokens,
            len(in_context),
        )
        return record.entries

    def _allowed(
        self, record: StoreEnrichment, found: Recollection, agent: Agent | None, link: AgentLink | None
    ) -> tuple[list[Passage], int | None]:
        """The passages a search may return, and the most tokens they may take (None: the budget alone).

        For injection (``link`` given): nothing after a second overflow in the invocation, at most the cap the
        first one set; with the gate on, nothing for an unrelated turn and at most ``uncertain_memory_tokens`` for
        an uncertain or unknown one. What is held back goes to ``record.left_out`` with its reason.
        """
        passages = list(found.passages)
        if link is None:
            return passages, None
        record.overflows = link.invocation.overflows
        cap = link.invocation.cap
        if cap == 0:
            record.left_out.extend(LeftOut(p, "overflow") for p in passages)
            return [], 0
        if record.gated:
            if found.relevance == "unrelated":
                record.left_out.extend(LeftOut(p, "unrelated") for p in passages)
                return [], 0
            if found.relevance != "relevant":
                uncertain = agent_budget(agent, self.budget).uncertain_memory_tokens
                cap = uncertain if cap is None else min(cap, uncertain)
        return passages, cap

    def _fit(self, agent: Agent, record: StoreEnrichment, cap: int | None = None) -> None:
        """Keep, of ``record.passages``, what fits the room the agent's next model call leaves (``_fit``).

        ``cap`` lowers that room further (an uncertain turn, or after a context overflow).
        """
        window_tokens = model_window(agent.model)
        budget = agent_budget(agent, self.budget)
        tokens = budget.memory_tokens(window_tokens, call_tokens(agent))
        share = budget.memory_tokens(window_tokens)
        if window_tokens is not None and tokens < share // 4 and not self._warned_squeezed:
            self._warned_squeezed = True
            logger.warning(
                "store=<%s>, room=<%d>, share=<%d> | the history leaves the memory a quarter of its share or less: a "
                "conversation manager that reduces only after an overflow keeps the window full; reduce before "
                "(for Strands' managers: proactive_compression=True) so that what the store finds reaches the model",
                self.name,
                tokens,
                share,
            )
        if cap is not None:
            tokens = min(tokens, cap)
        record.budget_tokens = tokens
        fit_passages(record, tokens, self.name, show_dates=self.show_dates)

    # ------------------------------------------------------------------ writing

    async def add_messages(self, messages: list[Message], context: AddMessagesContext | None = None) -> list[int]:
        """Archive a batch of conversation messages verbatim (Strands' extraction sink).

        Args:
            messages: The messages, oldest first, as Strands' extraction filter left them.
            context: Strands' batch context; its ``sequence_numbers`` make a retried batch idempotent.

        Returns:
            The archive index of each message.

        Raises:
            ValueError: If ``sequence_numbers`` does not align with ``messages``.
        """
        numbers = context.sequence_numbers if context is not None else None
        if numbers is not None and len(numbers) != len(messages):
            raise ValueError(f"got {len(numbers)} sequence numbers for {len(messages)} messages")
        prepared = [
            keyed(message, self._run_id, numbers[i] if numbers is not None else None)
            for i, message in enumerate(messages)
        ]
        session_id = session_of(self._serving())
        indices: list[int] = await asyncio.to_thread(self._memory.add, prepared, session_id=session_id)
        logger.debug("store=<%s>, messages=<%d> | batch archived", self.name, len(indices))
        return indices

    async def add(self, content: str, metadata: Metadata | None = None) -> int:
        """Archive one piece of content as a message (Strands' ``add_memory`` tool and ``MemoryManager.add``).

        Args:
            content: The text.
            metadata: Optional: ``role`` (``"user"``, the default, or ``"assistant"``) and ``timestamp`` (when it
                was said: ISO-8601 or epoch seconds).

        Returns:
            Its archive index.

        Raises:
            ValueError: If the content is empty or the role unknown.
        """
        if not isinstance(content, str) or not content.strip():
            raise ValueError("content must be a non-empty string")
        options = dict(metadata or {})
        role = options.get("role", "user")
        if role not in ("user", "assistant"):
            raise ValueError(f"metadata role must be 'user' or 'assistant', got {role!r}")
        message: Message = {"role": role, "content": [{"text": content}], "tracking_id": str(uuid.uuid4())}
        if options.get("timestamp") is not None:
            message["metadata"] = {"custom": {"timestamp": options["timestamp"]}}
        session_id = session_of(self._serving())
        indices: list[int] = await asyncio.to_thread(self._memory.add, [message], session_id=session_id)
        return indices[0]

    # ------------------------------------------------------------------ tools

    def get_tools(self) -> list[AgentTool]:
        """The conversation tools over this store's memory.

        None with ``tools=False``; ``conversation_forget`` only with ``allow_forget=True``.
        """
        if not self._tools:
            return []
        return memory_tools(
            self._memory,
            allow_forget=self._allow_forget,
            max_output_chars=max(DEFAULT_MAX_OUTPUT_CHARS, self.max_entry_chars),
            show_dates=True,
            context_radius=self.context_radius,
            min_score=self.min_score,
        )

    def close(self) -> None:
        """Close the memory, if this store built it (not a ``memory`` given to it): ``SemanticMemory.close``.

        Its embedding thread stops after its batch and never uses the archive again, then the archive's
        connections and files are released. Messages still waiting for their vectors stay archived, found by
        their words; a durable archive embeds them when it is opened again.
        """
        if self._owns_memory:
            self._memory.close()

    def __repr__(self) -> str:
        return f"SemanticMemoryStore(name={self.name!r}, writable={self.writable}, messages={len(self._memory)})"


def _source(injecting: bool) -> Literal["injection", "request"]:
    return "injection" if injecting else "request"
