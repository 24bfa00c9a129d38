"""LoCoMo in one session: the conversation overflows the window, and every question is asked in the loop.

Each LoCoMo conversation is played, session after session, through one ``Agent`` with this library's conversation
manager and hook, as the README's quick start builds them (``SemanticSummarizingConversationManager()`` in process,
``SemanticMemoryHook()``), the memory's clock reading each session's date; a ``ScriptedModel`` with a window of
4,000 or 8,000 tokens replies with speaker B's turns, refuses longer calls, and writes summaries that carry no fact,
so what reaches the model from beyond the recent history comes from the memory. Then every question is asked in the
same session: ``clean`` puts the history and the archive back after each question; ``pile-up`` keeps the questions
and the replies (``"I am not sure."``), as a user's session goes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands import Agent

from benchmarks import delivery
from benchmarks.common import Section, Settings, table
from benchmarks.data.locomo import Conversation, exchanges, load, located
from benchmarks.delivery import DAY, MINUTE, QUESTION_REPLY, Clock, Scored, Script
from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager

WINDOWS = (4_000, 8_000)
MODES = ("clean", "pile-up")
QUICK = {"sessions": 4, "questions": 6}


def play(conversation: Conversation, window: int) -> dict[str, Any]:
    """Play ``conversation`` in one session at ``window``, then ask its questions in each mode.

    Returns:
        ``{"scored": {mode: [Scored]}, "overflows", "summaries", "failed_turns", "exchanges"}`` (overflowed calls,
        summaries and failed turns while the conversation was played).
    """
    script = Script()
    model = delivery.scripted_model(window, script)
    clock = Clock()
    manager = SemanticSummarizingConversationManager(clock=clock)
    agent = Agent(model=model, conversation_manager=manager, hooks=[SemanticMemoryHook()], callback_handler=None)
    script.agent = agent
    failed = played = 0
    for session in conversation.sessions:
        for number, exchange in enumerate(exchanges(conversation, session)):
            clock.now = session.date + number * MINUTE
            script.reply = exchange.reply
            try:
                agent(delivery.prompt(exchange))
            except Exception:  # counted; the conversation goes on
                failed += 1
            played += 1
            model.requests.clear()  # the model keeps a copy of every call: not needed here
    manager.memory.embed_pending()
    overflows, summaries = model.overflows, script.summaries
    scored: dict[str, list[Scored]] = {}
    clock.now = conversation.sessions[-1].date + DAY if conversation.sessions else 0.0
    for mode in MODES:
        scored[mode] = []
        for number, question in enumerate(conversation.questions):
            script.reply, script.received, script.added_chars = QUESTION_REPLY, "", 0
            messages, state = list(agent.messages), _state(manager)
            before = manager.memory.stats()
            try:
                agent(question.text)
                broke = False
            except Exception:
                broke = True
            found, tokens = script.answered()
            by_words = manager.memory.stats().lexical_searches > before.lexical_searches
            scored[mode].append(delivery.score(conversation, number, delivery.Asked(found, tokens, broke, by_words)))
            model.requests.clear()
            if mode == "clean":
                agent.messages[:] = messages
                vars(manager).update(state)
                added = [r.index for r in manager.memory.records(before.next_index)]
                if added:
                    manager.memory.forget(added)
            else:
                manager.memory.embed_pending()
            clock.now += MINUTE
    manager.memory.close()
    return {
        "scored": scored,
        "overflows": overflows,
        "summaries": summaries,
        "failed_turns": failed,
        "exchanges": played,
    }


def _state(manager: Any) -> dict[str, Any]:
    """The manager's attributes, its containers copied: what a clean question puts back."""
    return {k: v.copy() if isinstance(v, (list, set, dict)) else v for k, v in vars(manager).items()}


def run(settings: Settings) -> dict[str, Any]:
    path = located(settings.locomo)
    if path is None:
        return {"skipped": f"the LoCoMo file {settings.locomo} was not found"}
    from strands_semantic_memory.embeddings import resolve_embedder

    resolve_embedder().embed_queries(["warm up"])
    conversations = load(path)
    if settings.quick:
        conversations = [c.sliced(QUICK["sessions"], QUICK["questions"]) for c in conversations[:1]]
    rows = []
    for window in WINDOWS:
        scored: dict[str, list[Scored]] = {mode: [] for mode in MODES}
        totals = {"overflows": 0, "summaries": 0, "failed_turns": 0, "exchanges": 0}
        for conversation in conversations:
            result = play(conversation, window)
            for mode in MODES:
                scored[mode] += result["scored"][mode]
            totals = {key: value + result[key] for key, value in totals.items()}
        for mode in MODES:
            rows.append({"window": window, "mode": mode, **delivery.summary(scored[mode]), **totals})
    sizes = {
        c.name: {"exchanges": sum(len(exchanges(c, s)) for s in c.sessions), "questions": len(c.questions)}
        for c in conversations
    }
    return {"rows": rows, "conversations": sizes}


def render(data: dict[str, Any], output: Path) -> str:
    if "skipped" in data:
        return f"Not measured: {data['skipped']}."
    rows, sizes = data["rows"], data["conversations"]
    categories = sorted({c for r in rows for c in r["categories"]})
    names = list(sizes)
    parts = [
        f"{len(sizes)} LoCoMo conversation(s) ("
        + ", ".join(f"{n}: {s['exchanges']} exchanges, {s['questions']} questions" for n, s in sizes.items())
        + "), each played in one session through `SemanticSummarizingConversationManager()` and "
        "`SemanticMemoryHook()` (in process), a scripted model replying with speaker B's turns, refusing calls "
        "longer than its window and summarizing without facts. Every question is then asked in the loop: `clean` "
        "puts the history and the archive back after each, `pile-up` keeps the questions and the replies. Delivered: "
        "the share of a question's evidence turns whose own text reached the answering call (recent history, summary "
        "or injected context), in percent; tokens: what the memory added to that call.",
        "",
        "*The chat model is scripted (`ScriptedModel`): it answers nothing, so these figures measure what reached the "
        "model, not its answers.*",
        "",
        table(
            [
                "window",
                "mode",
                "delivered %",
                "lowest conversation %",
                *categories,
                *names,
                "tokens per answering call",
                "overflowed calls",
                "summaries",
                "failed turns",
            ],
            [
                [
                    f"{r['window']:,}",
                    r["mode"],
                    f"{r['delivered']:.1f}",
                    f"{r['lowest']['delivered']:.1f} ({r['lowest']['conversation']})",
                    *(f"{r['categories'].get(c, 0.0):.1f}" for c in categories),
                    *(f"{r['conversations'].get(n, 0.0):.1f}" for n in names),
                    f"{r['tokens']:,.0f}",
                    r["overflows"],
                    r["summaries"],
                    r["failed"] + r["failed_turns"],
                ]
                for r in rows
            ],
        ),
        "",
    ]
    late = sum(r["by_words"] for r in rows)
    if late:
        parts += [f"**{late} questions were searched by words alone** (a loaded machine): those rows read too low.", ""]
    series = {mode: [(f"{r['window'] // 1000}k", r["delivered"]) for r in rows if r["mode"] == mode] for mode in MODES}
    parts.append(delivery.plot(output, "in-session.png", "LoCoMo in one session: delivered %", series, "delivered %"))
    return "\n".join(parts)


SECTION = Section("in_session", "LoCoMo in one session", run, render)
