"""One demo run: plant a reference number, talk, summarize (session 1); then, in a new session over the same
durable archive, search it and ask for the number (session 2); and the rates over several seeds.

A single run puts session 1 in a child process (``python -m demo.session_one``) and session 2 in this one, with a
new agent, conversation manager and hook over the same SQLite archive file (in a temporary folder): what was said in
one process comes back in another. ``--one-process`` and ``--seeds`` run both sessions in this process (the models
load once), still over the file. Today the manager archives only what leaves the context, so session 1 ends with an
explicit reduction (what a context overflow triggers).

Two results are reported separately: retrieval (the library's job: the planted number reached the model) and
the answer (the model's job: its reply contains the number).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import string
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from demo.checks import (
    Outcome,
    SummaryCheck,
    check_summary,
    contains_reference,
    failed_summary,
    seeds_exit_status,
    summary_from_dict,
    summary_result,
    summary_to_dict,
)
from demo.components import DemoError, load_embedder, make_chat_model, make_manager, make_tools, reply_time
from demo.console import Console, shorten

SYSTEM_PROMPT = (
    "You are a helpful assistant. Answer the user's question in one or two plain sentences of your own. "
    "When earlier messages are quoted before the question, use them: copy names and numbers from them exactly."
)
TOPIC_QUESTIONS = [
    "What is a hash table and when should I use one?",
    "How does a binary search tree keep its keys ordered?",
    "What is the difference between a stack and a queue?",
    "How does quicksort choose a pivot, and what is its worst case?",
    "Why is mergesort stable?",
    "What is a heap and how does a priority queue use it?",
    "How does breadth-first search differ from depth-first search?",
    "What problem does Dijkstra's algorithm solve?",
    "When is a linked list better than an array?",
    "What is dynamic programming, in one example?",
    "What is a trie good for?",
    "How does a union-find structure work?",
]
RECALL_QUESTION = "What is my reference number?"
# No "[Message N, role]" lines in the injected block: with them, SmolLM2-135M copied the labels into 9 of 10
# answers (python -m demo.levers, seeds 1-10); without them into none, with the same 8 of 10 answers right.
HOOK_OPTIONS: dict[str, Any] = {"max_context_length": 1500, "include_metadata": False}


def tool_text(result: Any) -> str:
    """The text of a Strands ToolResult (what the model would read)."""
    if isinstance(result, dict):
        parts = [block.get("text", "") for block in result.get("content", []) if isinstance(block, dict)]
        status = result.get("status", "success")
        text = "\n".join(p for p in parts if p)
        return text if status == "success" else f"[{status}] {text}"
    return str(result)


def reference_number(seed: int | None) -> str:
    rng = random.Random(seed)
    return f"REF-{rng.randint(10000, 99999)}-{rng.choice(string.ascii_uppercase)}{rng.randint(10, 99)}"


def show_conversation(messages: list[Any], console: Console, new: list[Any] | None = None) -> None:
    """One line per message of the active context; ``new`` messages (the summary) are labelled as such."""
    from strands_semantic_memory.messages import render_message

    for position, message in enumerate(messages):
        label = "summary" if new and any(message is m for m in new) else message["role"]
        console.item(f"{position:>2} {label:<9} {shorten(render_message(message), console.width - 16)}")


ROOT = Path(__file__).resolve().parents[1]
SESSION_ONE_SECONDS = "2 to 4 minutes on 2 cores (PyTorch backend), under a minute with llama-cpp-python"
"""What session 1 takes, as the parent announces it: loading the models, eleven replies and a summary."""


@dataclass
class FirstSession:
    """What session 1 leaves for session 2 besides the archive file (JSON, when it ran in another process).

    Attributes:
        reference: The planted reference number.
        archived: Messages in the archive when session 1 closed it.
        still_in_context: The number never left session 1's context, so it was not archived.
        summary: The check of session 1's summary (None when none was attempted).
        timings: Seconds of the conversation and the summary.
        model: The chat model, when session 1 ran in this process (for session 2 to reuse).
        embedder: The embedder, likewise.
    """

    reference: str
    archived: int
    still_in_context: bool
    summary: SummaryCheck | None
    timings: dict[str, float]
    model: Any = field(default=None, repr=False)
    embedder: Any = field(default=None, repr=False)

    def to_json(self) -> str:
        return json.dumps(
            {
                "reference": self.reference,
                "archived": self.archived,
                "still_in_context": self.still_in_context,
                "summary": summary_to_dict(self.summary),
                "timings": self.timings,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> FirstSession:
        data = json.loads(text)
        return cls(
            reference=data["reference"],
            archived=data["archived"],
            still_in_context=data["still_in_context"],
            summary=summary_from_dict(data["summary"]),
            timings=data["timings"],
        )


@dataclass
class Prepared:
    """A demo run up to the final question: session 2's agent over the archive, and the archive search."""

    reference: str
    agent: Any
    manager: Any
    hook: Any
    searched: bool
    still_in_context: bool
    summary: Any
    timings: dict[str, float]


def first_session(
    args: argparse.Namespace, console: Console, chat_model: Any | None, embedder: Any | None, archive: Path
) -> FirstSession:
    """Session 1, steps 1 to 5: plant, talk, summarize, over the SQLite archive file ``archive`` (closed at the end)."""
    from strands import Agent
    from strands.types.exceptions import ContextWindowOverflowException

    from strands_semantic_memory import SemanticMemoryHook
    from strands_semantic_memory.messages import render_message

    timings: dict[str, float] = {}
    reference = reference_number(args.seed)

    console.section("1. Session 1: setting up")
    model = chat_model if chat_model is not None else make_chat_model(args, console)
    embedder = embedder if embedder is not None else load_embedder(args.embedding_model, args.region, console)
    manager = make_manager(args, embedder, archive)
    hook = SemanticMemoryHook(**HOOK_OPTIONS)
    agent = Agent(
        model=model,
        system_prompt=SYSTEM_PROMPT,
        conversation_manager=manager,
        hooks=[hook],
        callback_handler=None,
    )
    kind = ' (summary_format="structured")' if args.structured else ""
    console.ok(f"agent ready: SemanticSummarizingConversationManager{kind} + SemanticMemoryHook")
    console.item(f"process {os.getpid()}; archive: a SQLite file, {archive}")

    console.section("2. Planting a reference number")
    first_turn = f"Please remember my reference number {reference}. It is private: keep it out of any summary."
    console.said("user", first_turn)
    console.said("assistant", str(agent(first_turn)))

    questions = TOPIC_QUESTIONS[: max(1, args.turns)]
    console.section(f"3. Talking about data structures ({len(questions)} turns{reply_time(model)})")
    started = time.perf_counter()
    for number, question in enumerate(questions, 1):
        console.said(f"{number:>2}. user", question)
        console.said("    assistant", str(agent(question)))
    timings["conversation"] = time.perf_counter() - started

    console.section("4. Before summarization: the active context")
    show_conversation(agent.messages, console)

    console.section("5. Summarizing (what a context overflow triggers)")
    before = list(agent.messages)
    summary_check = None
    try:
        summarizing = "Archiving the oldest messages and generating a summary" + reply_time(model, " (", ")")
        with console.step(summarizing) as step:
            manager.reduce_context(agent, e=ContextWindowOverflowException("demo: context window full"))
        timings["summarize"] = step["seconds"]
    except Exception as error:  # a failing summary must not hide what the archive kept
        console.fail(f"the summary failed ({error}); the messages stay in context and are archived")
        summary_check = failed_summary(error)
    removed = [m for m in before if not any(m is n for n in agent.messages)]
    new = [m for m in agent.messages if not any(m is b for b in before)]
    console.item(
        f"{len(before)} messages in context before, {len(agent.messages)} after; {len(manager.memory)} archived"
    )
    console.section("   After summarization: the active context")
    show_conversation(agent.messages, console, new)
    if new:
        summary_text = "\n".join(render_message(m) for m in new)
        console.said("summary", summary_text)
        if args.structured:
            show_structured_summary(manager, console)
        summary_check = check_summary(summary_text, [render_message(m) for m in removed], reference)
        report_summary(summary_check, reference, console)
    still_in_context = contains_reference([render_message(m) for m in agent.messages], reference)
    if still_in_context and (summary_check is None or not summary_check.has_reference):
        console.warn(
            "the reference number is still in the active context (the conversation was too short): it was not "
            "archived, so a new session cannot find it"
        )
    manager.memory.embed_pending()  # the vectors go into the file too: session 2 searches at once
    archived = len(manager.memory)
    manager.memory.close()
    console.ok(f"session 1 ends: {archived} messages archived in the file")
    return FirstSession(reference, archived, still_in_context, summary_check, timings, model, embedder)


def second_session(
    args: argparse.Namespace,
    console: Console,
    model: Any,
    embedder: Any,
    archive: Path,
    first: FirstSession,
    where: str,
) -> Prepared:
    """Session 2, step 6: a new agent, manager and hook over the same archive file; the archive searched."""
    from strands import Agent

    from strands_semantic_memory import SemanticMemoryHook
    from strands_semantic_memory.messages import render_message

    timings = dict(first.timings)
    manager = make_manager(args, embedder, archive)
    tools = make_tools(manager) if args.tools else []
    hook = SemanticMemoryHook(**HOOK_OPTIONS)
    agent = Agent(
        model=model,
        system_prompt=SYSTEM_PROMPT,
        conversation_manager=manager,
        hooks=[hook],
        tools=tools,
        callback_handler=None,
    )
    parts = ["a new SemanticSummarizingConversationManager over the same file", "a new SemanticMemoryHook"]
    if tools:
        parts.append(f"{len(tools)} conversation tools")
    console.ok("agent ready: " + " + ".join(parts))
    console.item(
        f"process {os.getpid()}; the new session starts with {len(agent.messages)} messages in context; the archive "
        f"file holds {len(manager.memory)} ({where})"
    )

    reference = first.reference
    started = time.perf_counter()
    hits = manager.memory.search(RECALL_QUESTION, top_k=3)
    timings["search_ms"] = (time.perf_counter() - started) * 1000
    console.item(f'searching the archive: "{RECALL_QUESTION}" ({timings["search_ms"]:.1f} ms)')
    searched = False
    for hit in hits:
        text = render_message(hit.message)
        has_reference = reference in text
        searched = searched or has_reference
        marker = "  <-- the reference number" if has_reference else ""
        console.item(f"score {hit.score:.3f}  [message {hit.index}, {hit.message['role']}] {shorten(text, 60)}{marker}")
    if searched:
        console.ok(f"{reference} is retrievable from the archive, verbatim")
    else:
        console.fail(f"{reference} was not among the top hits", "see docs/benchmarks.md for retrieval quality")
    # A new session holds none of session 1's messages: the number can reach the model through the archive only.
    return Prepared(reference, agent, manager, hook, searched, False, first.summary, timings)


def prepare_run(
    args: argparse.Namespace, console: Console, chat_model: Any | None, embedder: Any | None, archive: Path
) -> Prepared:
    """Both sessions up to the final question, in this process, over the archive file ``archive`` (a new one)."""
    first = first_session(args, console, chat_model, embedder, archive)
    console.section("6. Session 2, in the same process: a new agent, manager and hook over the same archive file")
    return second_session(args, console, first.model, first.embedder, archive, first, "session 1 ran in this process")


class Preload:
    """This process's chat model and embedder, loaded in a thread while session 1 runs in the child process.

    Session 2 needs its own copy of the models (it runs in another process than session 1); loading them meanwhile
    takes their load time (most of a minute for the PyTorch backend on a busy 2-core machine) off the wall clock.
    """

    def __init__(self, args: argparse.Namespace) -> None:
        self.started = time.perf_counter()
        self.seconds = 0.0
        self.models: tuple[Any, Any] | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._load, args=(args,), name="demo-preload", daemon=True)
        self.thread.start()

    def _load(self, args: argparse.Namespace) -> None:
        quiet = Console(io.StringIO())
        try:
            model = make_chat_model(args, quiet)
            self.models = (model, load_embedder(args.embedding_model, args.region, quiet))
        except BaseException as error:  # raised again in the main thread, by wait()
            self.error = error
        self.seconds = time.perf_counter() - self.started

    def wait(self, console: Console) -> tuple[Any, Any]:
        """The loaded models (waiting for them if need be); what failed to load is raised here."""
        if self.thread.is_alive():
            with console.step("Waiting for this process's chat model and embedder (still loading)"):
                self.thread.join()
        if self.error is not None:
            raise self.error
        assert self.models is not None
        console.item(f"this process's chat model and embedder loaded in {self.seconds:.1f} s, while session 1 ran")
        return self.models


def first_session_in_child(args: argparse.Namespace, console: Console, archive: Path) -> FirstSession:
    """Run session 1 in a child process (``python -m demo.session_one``); its output goes to ``console``."""
    spec = archive.parent / "session-one.json"
    result = archive.parent / "session-one-result.json"
    spec.write_text(json.dumps({"args": vars(args), "archive": str(archive), "result": str(result)}))
    console.line()
    console.line(
        f"Session 1 runs in a child process (python -m demo.session_one; {SESSION_ONE_SECONDS}); this process loads "
        "its own models meanwhile, for session 2."
    )
    command = [sys.executable, "-m", "demo.session_one", str(spec)]
    if console.out is sys.stdout:  # the child writes straight to the terminal, progress as it happens
        status = subprocess.run(command, cwd=ROOT, check=False).returncode
    else:
        child = subprocess.run(command, cwd=ROOT, check=False, stdout=subprocess.PIPE, text=True)
        console.out.write(child.stdout)
        status = child.returncode
    if status != 0 or not result.is_file():
        raise DemoError(f"session 1 (the child process) failed with exit status {status}", "its output above says why")
    return FirstSession.from_json(result.read_text())


def ask_recall(prepared: Prepared, console: Console) -> Outcome:
    """Step 7: ask the agent for the number; show what the hook injected and the reply, in full."""
    console.section("7. Asking the agent in session 2" + reply_time(prepared.agent.model, " (", ")"))
    console.said("user", RECALL_QUESTION)
    started = time.perf_counter()
    answer = str(prepared.agent(RECALL_QUESTION))
    prepared.timings["answer"] = time.perf_counter() - started
    enrichment = prepared.hook.last_enrichment
    injected = ""
    if enrichment is not None and enrichment.text:
        injected = enrichment.text  # what the model received for the question: the archived passages, then it
        console.item(
            f"the hook added earlier context to this turn ({enrichment.elapsed_ms:.1f} ms); the model received:"
        )
        console.block(enrichment.text, indent=6)
    else:
        console.warn("the hook found nothing to add to this turn")
    console.said("assistant", answer)
    return Outcome(
        reference=prepared.reference,
        searched=prepared.searched,
        injected=contains_reference([injected], prepared.reference),
        still_in_context=prepared.still_in_context,
        answer=answer,
        summary=prepared.summary,
    )


def run_demo(
    args: argparse.Namespace, console: Console, chat_model: Any | None, embedder: Any | None = None
) -> Outcome:
    """One run of the demo: session 1 (plant, talk, summarize), session 2 (search, ask); returns the verdict.

    Session 1 runs in a child process unless a ready model is given (tests, ``--seeds``) or ``--one-process``.
    """
    with tempfile.TemporaryDirectory(prefix="ssm-demo-") as folder:
        archive = Path(folder) / "archive.sqlite3"
        if chat_model is None and not getattr(args, "one_process", False):
            preload = Preload(args)  # this process's models load while session 1 runs in the child
            first = first_session_in_child(args, console, archive)
            console.section("6. Session 2, in this process: a new agent, manager and hook over the same archive file")
            model, embedder = preload.wait(console)
            prepared = second_session(args, console, model, embedder, archive, first, "written by the child process")
        else:
            prepared = prepare_run(args, console, chat_model, embedder, archive)
        try:
            outcome = ask_recall(prepared, console)
            if args.tools:
                show_tools(prepared.agent, prepared.manager, prepared.reference, console)
            timings = prepared.timings
            console.section("Memory and timings")
            console.block(prepared.manager.get_memory_usage_summary(), indent=2)
            summarized = timings.get("summarize", 0)
            console.item(
                f"session 1: conversation {timings['conversation']:.1f} s, summary {summarized:.1f} s; "
                f"session 2: archive search {timings['search_ms']:.1f} ms, final answer {timings['answer']:.1f} s"
            )
        finally:
            prepared.manager.memory.close()
    report_outcome(outcome, console)
    return outcome


def report_summary(check: Any, reference: str, console: Console) -> None:
    if check.passed and check.replaced:
        names = ", ".join(t.name for t in check.named)
        console.ok(f"the summary names {len(check.named)} of the {len(check.replaced)} topics it replaced ({names})")
    elif check.replaced:
        console.warn(
            f"the summary names none of the {len(check.replaced)} topics it replaced: it says nothing a later turn "
            "could use (the archive still holds every word)"
        )
    if check.has_reference:
        console.warn(f"the summary repeats {reference}: this model echoed it (summaries are not guaranteed)")
    else:
        console.ok(f"the summary does not contain {reference}: without the archive it would be lost")


def report_outcome(outcome: Outcome, console: Console) -> None:
    """The two verdicts, each on its own line, saying whose job it was."""
    console.line()
    if outcome.injected:
        console.line(
            f"RESULT retrieval (the library): ok, {outcome.reference} reached the model in the injected context"
        )
    elif outcome.retrieved:
        console.line(
            f"RESULT retrieval (the library): ok, {outcome.reference} reached the model: it is still in the active "
            "context (the hook does not repeat what the model already sees)"
        )
    elif outcome.searched:
        console.line(
            f"RESULT retrieval (the library): FAILED, {outcome.reference} was found by search but not injected"
        )
    else:
        console.line(f"RESULT retrieval (the library): FAILED, {outcome.reference} was not found in the archive")
    if outcome.answered:
        console.line(f"RESULT answer (the model):      ok, the reply contains {outcome.reference}")
    else:
        detail = f"; it gave {', '.join(outcome.other_references)} instead" if outcome.other_references else ""
        console.line(f"RESULT answer (the model):      WRONG, the reply does not contain {outcome.reference}{detail}")
    if outcome.echoed_labels:
        console.line("                                (the reply copies [Message N] labels of the injected context)")
    if outcome.copied_quote:
        console.line("                                (the reply copies a quoted line of the injected context)")
    summary_line = summary_result(outcome.summary)
    if summary_line is not None:
        console.line(summary_line)


def show_structured_summary(manager: Any, console: Console) -> None:
    state = getattr(manager, "structured_summary", None)
    if state is None:
        console.warn("manager.structured_summary is empty: no structured state was produced")
        return
    dump = state.model_dump_json(indent=2) if hasattr(state, "model_dump_json") else str(state)
    console.item("manager.structured_summary:")
    console.block(dump, indent=6)


def show_tools(agent: Any, manager: Any, reference: str, console: Console) -> None:
    """Call the conversation tools through the agent (as the model would) and show their outputs in full."""
    console.section("8. The conversation tools (called directly: the 135M model does not call tools reliably)")
    call = agent.tool

    def run(name: str, **arguments: Any) -> str:
        console.item(f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())}):")
        text = tool_text(getattr(call, name)(record_direct_tool_call=False, **arguments))
        console.block(text, indent=6)
        return text

    found = run("conversation_search", query="reference number", limit=2)
    hit_indices = [h.index for h in manager.memory.search(reference, top_k=1)]
    if hit_indices:
        index = hit_indices[0]
        run("conversation_read", start=max(0, index - 1), end=index + 1)
    run("conversation_forget", query=reference)
    after = run("conversation_search", query="reference number", limit=2)
    gone = reference not in after and not any(reference in str(h.message) for h in manager.memory.search(reference))
    if reference in found and gone:
        console.ok(f"{reference} was found, read, then forgotten: searching no longer returns it")
    elif gone:
        console.ok(f"{reference} was forgotten: searching no longer returns it")
    else:
        console.fail(f"{reference} can still be found after conversation_forget")


def run_seeds(args: argparse.Namespace, console: Console, chat_model: Any | None) -> int:
    """Run the demo for ``args.seeds`` seeds and report how often retrieval and the answer succeeded."""
    count = max(1, args.seeds)
    first = 1 if args.seed is None else args.seed
    console.section(
        f"{count} runs, seeds {first}..{first + count - 1} (each run's full output is not shown; both sessions run in "
        "this process, so the models load once)"
    )
    model = chat_model if chat_model is not None else make_chat_model(args, console)
    embedder = load_embedder(args.embedding_model, args.region, console)
    outcomes: list[Outcome] = []
    for seed in range(first, first + count):
        started = time.perf_counter()
        run_args = argparse.Namespace(**{**vars(args), "seed": seed})
        outcome = run_demo(run_args, Console(io.StringIO()), model, embedder)
        outcomes.append(outcome)
        summary = "-" if outcome.summary is None else outcome.summary.label
        console.item(
            f"seed {seed:>3} {outcome.reference}  retrieval {'ok' if outcome.retrieved else 'FAILED':<6} "
            f"answer {'ok' if outcome.answered else 'WRONG':<5} summary {summary:<5} "
            f"({time.perf_counter() - started:.0f} s)"
        )
        console.said("      answer", outcome.answer)
    retrieved = sum(o.retrieved for o in outcomes)
    answered = sum(o.answered for o in outcomes)
    echoed = sum(o.echoed_labels for o in outcomes)
    copied = sum(o.copied_quote for o in outcomes)
    console.line()
    console.line(f"RESULT retrieval (the library): {retrieved}/{count} runs put the number in front of the model")
    console.line(f"RESULT answer (the model):      {answered}/{count} answers contain the number")
    if echoed:
        console.line(f"                                {echoed}/{count} answers copy [Message N] labels")
    if copied:
        console.line(f"                                {copied}/{count} answers copy a quoted line of the context")
    failed = sum(o.summary_failed for o in outcomes)
    if failed:
        console.line(f"RESULT summary (the model):     {failed}/{count} runs made no summary")
    return seeds_exit_status(outcomes)
