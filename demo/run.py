"""One run: session 1 plants a reference number and talks until the manager summarizes; session 2, a new agent over
the same archive file and user, asks for it. Progress goes to stdout in whole lines; logs go to stderr.
"""

import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from strands import Agent

from demo import checks
from demo.model import WINDOW, SmolLM2

SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the user's question in one or two plain sentences of your own. "
    "When earlier messages are quoted before the question, use them: copy names and numbers from them exactly."
)
SUMMARY_PROMPT = "Summarize the conversation above in two or three short sentences about the topics discussed."
TOPICS = (
    "What is a hash table and when should I use one?|How does a binary search tree keep its keys ordered?|"
    "What is the difference between a stack and a queue?|How does quicksort choose a pivot, and what is its worst "
    "case?|Why is mergesort stable?|What is a heap and how does a priority queue use it?|How does breadth-first "
    "search differ from depth-first search?|What problem does Dijkstra's algorithm solve?|When is a linked list "
    "better than an array?|What is dynamic programming, in one example?|What is a trie good for?"
).split("|")
QUESTION = "What is my reference number?"


def say(text: str, indent: int = 2) -> None:
    """Whole lines, flushed at once (a log line on stderr never lands inside one); later lines of ``text`` are
    indented under the first, and wrapped parts further."""
    first, rest, wrapped = (" " * (indent + n) for n in (0, 2, 4))
    lines = [textwrap.fill(t, 110, initial_indent=rest if i else first, subsequent_indent=wrapped) for i, t in
             enumerate(text.splitlines())]  # fmt: skip
    print("\n".join(lines), flush=True)


def agent_for(model: SmolLM2, archive: Path, embedder: Any) -> tuple[Agent, Any, Any]:
    """An agent whose manager archives to ``archive`` for the demo's user, with the hook; and those two."""
    from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager

    manager = SemanticSummarizingConversationManager(
        summary_ratio=0.6, preserve_recent_messages=4, summarization_system_prompt=SUMMARY_PROMPT,
        archive_path=archive, user_id="demo-user", embedder=embedder,
    )  # fmt: skip
    # Two hits with one neighbour each: with the default depth the block ran on into later turns and the 135M model
    # answered from those instead, in 8 of 8 runs (docs/demo.md).
    hook = SemanticMemoryHook(top_k=2, context_radius=1)
    agent = Agent(
        model=model, system_prompt=SYSTEM_PROMPT, conversation_manager=manager, hooks=[hook], callback_handler=None
    )
    return agent, manager, hook


def ask(agent: Agent, text: str, who: str = "user") -> str:
    say(f"{who}: {text}")
    started = time.perf_counter()
    reply = str(agent(text)).strip()
    say(f"assistant ({time.perf_counter() - started:.1f} s): {reply}")
    return reply


def run(seed: int | None, turns: int) -> int:
    """The demo; returns the exit status (0: every check of the library held)."""
    from strands_semantic_memory.budget import ContextBudget
    from strands_semantic_memory.embeddings import resolve_embedder
    from strands_semantic_memory.messages import render_message

    reference, limit, started = checks.reference_number(seed), ContextBudget().history_limit(WINDOW), time.time()
    print("\n== Loading the models", flush=True)
    say("waiting for SmolLM2-135M-Instruct to load on PyTorch (de-quantizing its weights: 15 s to a minute) ...")
    model = SmolLM2()
    say(f"loaded in {time.time() - started:.1f} s; it declares a {WINDOW}-token window, of which the history may fill")
    say(f"{limit} tokens (ContextBudget's defaults: the rest is kept for what the hook adds and for the reply)")
    say("waiting for the embedding model (bundled; about 1 s, or 10 s once per machine to export it for ONNX) ...")
    embedder, started = resolve_embedder(), time.time()
    say(f"{embedder.model_id}, {embedder.dimension} dimensions, ready in {time.time() - started:.1f} s")

    def announce(chat: list[dict[str, str]]) -> None:
        if chat[0]["content"] == SUMMARY_PROMPT:
            say(f"waiting for the model's summary of {len(chat) - 2} messages (the history is over {limit} tokens) ...")
        else:
            count = f"{len(chat) - 1} message{'s' * (len(chat) != 2)}"
            say(f"waiting for the model's reply to the system prompt and {count} (3 to 25 s on 2 cores) ...")

    model.on_call = announce
    with tempfile.TemporaryDirectory(prefix="ssm-demo-") as folder:
        archive = Path(folder) / "archive.sqlite3"
        print(f"\n== Session 1: {turns + 1} turns, each message archived as it is said, in {archive}", flush=True)
        agent, manager, _ = agent_for(model, archive, embedder)
        summaries: list[str] = []
        for number, text in enumerate([f"Please remember my reference number {reference}.", *TOPICS[:turns]]):
            ask(agent, text, f"{number:>2}. user")
            summary = "" if manager.summary_message is None else render_message(manager.summary_message)
            if summary and summary not in summaries[-1:]:
                summaries.append(summary)
                say(f"the manager summarized the oldest messages; the summary, now first in the context: {summary}")
        in_context = any(checks.mentions(render_message(m), reference) for m in agent.messages)
        say(f"session 1 ends; {reference} is {'still' if in_context else 'no longer'} in its context (or summary)")
        say("waiting for the archive's last vectors ...")
        manager.memory.embed_pending()
        count, found = len(manager.memory), manager.memory.find_text(reference)
        manager.memory.close()
        results = [checks.archived(count, 2 * turns + 2, found, reference)]
        results.append(checks.summarized(summaries, in_context, reference))

        print("\n== Session 2: a new Agent, manager and hook over the same file, for the same user", flush=True)
        agent, manager, hook = agent_for(model, archive, embedder)
        say(f"{len(agent.messages)} messages in its context, {len(manager.memory)} in the archive")
        reply = ask(agent, QUESTION)
        injected = hook.last_enrichment.text if hook.last_enrichment else ""
        say(f"what the hook added to the question, as the model received it:\n{injected}" if injected else "(nothing)")
        manager.memory.close()
    results += [checks.retrieved(injected, reference), checks.answered(reply, reference)]
    print("\n== Checks", flush=True)
    print("\n".join(check.line() for check in results), flush=True)
    return checks.exit_status(results)
