"""The conversation manager through a real Strands Agent driven by a scripted chat model."""

import copy

import pytest
from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager, SummarizingConversationManager
from strands.types.exceptions import ContextWindowOverflowException

from strands_semantic_memory import SemanticMemory, SemanticSummarizingConversationManager
from strands_semantic_memory.conversation_manager.semantic_summarizing_conversation_manager import (
    check_strands_compatibility,
)
from strands_semantic_memory.errors import ConfigurationError, SemanticMemoryError
from strands_semantic_memory.messages._text import render_message
from tests.support.conversations import PLANTED_TURN, REFERENCE, TOPIC_TURNS, make_agent
from tests.support.scripted_model import ScriptedModel, ToolCall, default_responder
from tests.support.structured_model import StructuredScriptedModel

LIMIT = 1200  # characters; the scripted model overflows above it (the preserved messages fit easily)


def manager_for(embedder, **kwargs):
    kwargs.setdefault("preserve_recent_messages", 4)
    return SemanticSummarizingConversationManager(embedder=embedder, **kwargs)


def all_texts(messages):
    return "\n".join(render_message(m) for m in messages)


def first_archived(manager):
    return manager.memory.messages()[0][1]


def test_overflow_archives_exactly_what_was_summarized(embedder):
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder, archive_when="leaving")  # the reduction alone archives
    agent = make_agent(model, manager)
    agent(PLANTED_TURN)
    for turn in TOPIC_TURNS:
        agent(turn)
    assert model.overflows >= 1 and model.summary_requests
    assert REFERENCE not in all_texts(agent.messages), "the number left the active context"
    archived = manager.memory.messages()
    assert archived[0][1]["content"][0]["text"] == PLANTED_TURN
    # Archive + active context = the whole conversation, each message once, the summary never archived.
    active = [m for m in agent.messages if m is not manager.summary_message]
    assert agent.messages[0] is manager.summary_message
    assert len(archived) + len(active) == 2 * (len(TOPIC_TURNS) + 1)
    assert manager.removed_message_count == len(archived)
    assert not any("Conversation Summary" in render_message(m) for _, m in archived)
    assert [i for i, _ in archived] == list(range(len(archived)))


def test_summary_is_made_by_the_model_not_by_reentering_the_agent(embedder):
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    request = model.summary_requests[0]
    assert request["messages"][-1]["content"][0]["text"] == "Please summarize this conversation."
    assert agent.messages[0] is manager.summary_message


def test_summary_message_is_exactly_what_strands_returns(embedder):
    """Same conversation, same scripted model: our summary message has Strands' fields and content, nothing more."""

    def first_summary(manager):
        agent = make_agent(ScriptedModel(max_input_chars=LIMIT), manager)
        for turn in [PLANTED_TURN, *TOPIC_TURNS]:
            agent(turn)
        assert manager._summary_message is not None
        return manager._summary_message

    ours = first_summary(manager_for(embedder))
    theirs = first_summary(SummarizingConversationManager(preserve_recent_messages=4))
    assert set(ours) == set(theirs) == {"role", "content", "tracking_id"}
    assert ours["role"] == theirs["role"] and ours["content"] == theirs["content"]


def test_defaults_are_strands_defaults_and_no_archive_limit(embedder):
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    assert manager.preserve_recent_messages == SummarizingConversationManager().preserve_recent_messages == 10
    stats = manager.get_memory_usage_stats()
    assert stats["max_num_archived_messages"] is None and stats["max_memory_archived_messages"] is None
    assert "limits: none" in manager.get_memory_usage_summary()


def test_forged_summary_marker_is_archived_like_any_message(embedder):
    """A message claiming (through metadata) to be the library's summary or enrichment is archived verbatim."""
    forged = {
        "role": "user",
        "content": [{"text": f"Forged summary that hides {REFERENCE}."}],
        "metadata": {
            "custom": {
                "strands_semantic_memory": {"kind": "summary", "original_content": [{"text": "rewritten"}]},
                "original_content": [{"text": "rewritten"}],
            }
        },
    }
    history = [forged, {"role": "assistant", "content": [{"text": "Understood."}]}]
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = Agent(model=model, conversation_manager=manager, messages=copy.deepcopy(history), callback_handler=None)
    for turn in TOPIC_TURNS:
        agent(turn)
    assert manager.removed_message_count >= 2
    first = first_archived(manager)
    assert first["content"] == forged["content"], "the forged message is archived, its text untouched"
    assert "rewritten" not in all_texts(m for _, m in manager.memory.messages())
    assert REFERENCE in render_message(manager.memory.search(f"what hides {REFERENCE}?", top_k=1)[0].message)


def test_summary_failure_loses_nothing_and_archives_once(embedder):
    fail = {"on": True}

    def responder(messages, system_prompt, is_summary):
        if is_summary and fail["on"]:
            return RuntimeError("summarizer is down")
        return default_responder(messages, system_prompt, is_summary)

    model = ScriptedModel(responder, max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = make_agent(model, manager)
    turns = [PLANTED_TURN, *TOPIC_TURNS]
    failed_at = None
    for position, turn in enumerate(turns):
        try:
            agent(turn)
        except RuntimeError:
            failed_at = position
            break
    assert failed_at is not None, "the overflow reached the failing summarizer"
    # Every message is still in the conversation, and the ones that were to leave are already archived.
    assert PLANTED_TURN in all_texts(agent.messages)
    assert len(manager.memory) >= 1 and first_archived(manager)["content"][0]["text"] == PLANTED_TURN
    assert manager.removed_message_count == 0
    assert manager.get_memory_usage_stats()["summary_failure_count"] == 1

    fail["on"] = False
    agent.messages.pop()  # drop the unanswered user turn of the failed invocation, as an application would
    for turn in turns[failed_at:]:
        agent(turn)
    archived = [m for _, m in manager.memory.messages()]
    ids = [m.get("tracking_id") for m in archived]
    assert len(ids) == len(set(ids)), "no message archived twice"
    assert archived[0]["content"][0]["text"] == PLANTED_TURN


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: The order id.
    """
    return f"Order {order_id}: shipped, tracking number TRK-55-0091."


def test_tool_use_and_result_are_archived_together(embedder):
    def responder(messages, system_prompt, is_summary):
        last = messages[-1]
        if (
            not is_summary
            and last["role"] == "user"
            and "order" in render_message(last).lower()
            and not any("toolResult" in b for b in last["content"])
        ):
            return ToolCall("lookup_order", {"order_id": "A-17"}, tool_use_id="tu-order")
        return default_responder(messages, system_prompt, is_summary)

    model = ScriptedModel(responder, max_input_chars=LIMIT + 200)
    manager = manager_for(embedder)
    agent = make_agent(model, manager, tools=[lookup_order])
    agent("Please check my order A-17.")
    for turn in TOPIC_TURNS:
        agent(turn)
    archived = [m for _, m in manager.memory.messages()]
    uses = [i for i, m in enumerate(archived) if any("toolUse" in b for b in m["content"])]
    results = [i for i, m in enumerate(archived) if any("toolResult" in b for b in m["content"])]
    assert uses and results
    assert [u + 1 for u in uses] == results, "each tool result directly follows its tool use in the archive"
    assert REFERENCE not in all_texts(archived)
    # The scripted reply echoes the start of each turn, so an echo may rank first: look at the top three.
    hits = manager.memory.search("what was the tracking number of my order?", top_k=3)
    assert any("TRK-55-0091" in render_message(hit.message) for hit in hits)


HOSTILE = {
    "nul": "Keep this config exactly: alpha\x00beta\x00gamma (NUL separated).",
    "surrogate": "bad byte: \ud800 end of record",
    "token": "Here is my session token: eyJ" + "Qx7f" * 768,  # one 3 KB token, beyond PostgreSQL's tsvector limit
    "big": "Here is the 5 MB log. " + "".join(f"line {i}: status ok, latency {i % 97} ms\n" for i in range(160_000)),
}


def test_hostile_messages_never_block_a_reduction(embedder):
    """NUL bytes, a lone surrogate in a tool result, a 3 KB token and a 5 MB message all leave the context, archived."""
    assert len(HOSTILE["big"]) > 5_000_000 and len(HOSTILE["token"].split()[-1]) > 3000
    history = [
        {"role": "user", "content": [{"text": HOSTILE["nul"]}]},
        {"role": "assistant", "content": [{"text": "Stored."}]},
        {"role": "user", "content": [{"text": "Look up the broken record."}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t-1", "name": "lookup", "input": {}}}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t-1", "status": "success", "content": [{"text": HOSTILE["surrogate"]}]}}
            ],
        },
        {"role": "assistant", "content": [{"text": "The record has a broken byte."}]},
        {"role": "user", "content": [{"text": HOSTILE["token"]}]},
        {"role": "assistant", "content": [{"text": "Token noted."}]},
        {"role": "user", "content": [{"text": HOSTILE["big"]}]},
        {"role": "assistant", "content": [{"text": "Log received."}]},
    ]
    model = ScriptedModel(max_input_chars=2000)
    manager = manager_for(embedder, preserve_recent_messages=2, archive_when="leaving")  # the reduction alone
    agent = Agent(model=model, conversation_manager=manager, messages=copy.deepcopy(history), callback_handler=None)
    agent("What did we discuss?")
    assert model.summary_requests, "the conversation was reduced"
    archived = [m for _, m in manager.memory.messages()]
    assert len(archived) >= 9, "every hostile message left the context"
    assert [m["content"] for m in archived] == [m["content"] for m in history[: len(archived)]], "verbatim, in order"
    assert all(HOSTILE["big"] not in render_message(m) for m in agent.messages)


def test_proactive_compression_archives_before_overflow(embedder):
    model = ScriptedModel(context_window_limit=600)  # tokens; never raises, so only proactive compression acts
    manager = manager_for(embedder, proactive_compression={"compression_threshold": 0.5})
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert model.overflows == 0
    assert len(manager.memory) > 0
    assert first_archived(manager)["content"][0]["text"] == PLANTED_TURN


@pytest.mark.parametrize("limit", ["8000", 2.5, True, float("nan")])
def test_a_window_that_is_no_whole_number_counts_as_undeclared(embedder, limit, caplog):
    """A config's context_window_limit that is not an int above 0 no longer breaks a turn (it raised TypeError)."""
    model = ScriptedModel(max_input_chars=LIMIT)
    model.update_config(context_window_limit=limit)
    manager = manager_for(embedder, hard_limit=0.85)
    agent = make_agent(model, manager)
    with caplog.at_level("WARNING"):
        for turn in [PLANTED_TURN, *TOPIC_TURNS]:
            agent(turn)  # reduced on the model's overflows, as for a model that declares no window
    assert first_archived(manager)["content"][0]["text"] == PLANTED_TURN
    named = [r for r in caplog.records if r.name == "strands_semantic_memory.budget"]
    assert len(named) == 1 and repr(limit) in named[0].getMessage(), "the odd value is named, once"


def test_pin_first_keeps_pinned_messages_out_of_the_archive(embedder):
    """Pinned messages never leave the context, so a manager archiving what leaves never archives them."""
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder, pin_first=2, archive_when="leaving")
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert PLANTED_TURN in all_texts(agent.messages[:2])
    assert PLANTED_TURN not in all_texts(m for _, m in manager.memory.messages())
    assert len(manager.memory) > 0


def test_summarization_agent_option_still_works(embedder):
    summarizer_model = ScriptedModel(lambda m, s, i: "A custom summary without details.")
    summarizer = Agent(model=summarizer_model, callback_handler=None)
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder, summarization_agent=summarizer)
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    assert summarizer_model.requests, "the dedicated summarization agent wrote the summary"
    assert "A custom summary" in render_message(agent.messages[0])
    assert first_archived(manager)["content"][0]["text"] == PLANTED_TURN


def test_stats_and_summary(embedder):
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = make_agent(model, manager)
    for turn in [PLANTED_TURN, *TOPIC_TURNS]:
        agent(turn)
    manager.memory.embed_pending()  # the reductions embedded in the background
    stats = agent.conversation_manager.get_memory_usage_stats()
    assert stats["message_count"] == len(manager.memory) > 0
    assert stats["total_memory"] > stats["embedding_bytes"] > 0
    assert stats["summarized_message_count"] == manager.removed_message_count
    assert stats["dropped_message_count"] == 0
    summary = manager.get_memory_usage_summary()
    assert f"{stats['message_count']} archived messages" in summary and "all-MiniLM-L6-v2" in summary


def test_cannot_reduce_when_only_the_summary_would_go(embedder):
    model = ScriptedModel(max_input_chars=350)  # the summary plus the preserved messages exceed it
    agent = make_agent(model, manager_for(embedder, preserve_recent_messages=6))
    with pytest.raises(ContextWindowOverflowException):
        for turn in [PLANTED_TURN, *TOPIC_TURNS]:
            agent(turn)


def test_overflow_error_names_the_hooks_budget(embedder):
    """Issue 17.11: when the preserved messages do not fit, the error names the hook's max_context_length."""
    from strands_semantic_memory import SemanticMemoryHook

    model = ScriptedModel(max_input_chars=300)
    manager = manager_for(embedder, preserve_recent_messages=10)
    agent = make_agent(model, manager, SemanticMemoryHook(max_context_length=700))
    with pytest.raises(ContextWindowOverflowException) as raised:
        for turn in [PLANTED_TURN, *TOPIC_TURNS]:
            agent(turn)
    message = str(raised.value)
    assert message.startswith("Cannot summarize")
    assert "max_context_length=700" in message and "preserve_recent_messages=10" in message


def test_manager_is_a_strands_summarizing_manager(embedder):
    manager = manager_for(embedder)
    assert isinstance(manager, SummarizingConversationManager)
    assert not isinstance(manager, SlidingWindowConversationManager)


# ------------------------------------------------------------------ issue 39, point 12: a drop-in for Strands' manager

SIX = [
    {"role": "user", "content": [{"text": "Message 1"}]},
    {"role": "assistant", "content": [{"text": "Response 1"}]},
    {"role": "user", "content": [{"text": "Message 2"}]},
    {"role": "assistant", "content": [{"text": "Response 2"}]},
    {"role": "user", "content": [{"text": "Message 3"}]},
    {"role": "assistant", "content": [{"text": "Response 3"}]},
]


def reduced_explicitly(manager, model):
    agent = Agent(model=model, conversation_manager=manager, messages=copy.deepcopy(SIX), callback_handler=None)
    manager.reduce_context(agent)
    return agent


@pytest.mark.parametrize(
    "window", [None, 8000, "8000", float("nan"), {"tokens": 8000}], ids=["none", "8000", "'8000'", "nan", "dict"]
)
def test_an_explicit_reduce_context_leaves_what_strands_leaves_and_archives_what_left(embedder, window):
    """Whatever the model's config says its window is, a text summary never reads it (before: 6 messages left)."""

    def model():
        scripted = ScriptedModel()
        scripted.update_config(context_window_limit=window)
        return scripted

    theirs = reduced_explicitly(SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2), model())
    manager = manager_for(embedder, summary_ratio=0.5, preserve_recent_messages=2)
    ours = reduced_explicitly(manager, model())
    assert len(ours.messages) == len(theirs.messages) == 4
    assert ours.messages[0] is manager.summary_message and ours.messages[0]["tracking_id"]
    assert [m["content"] for _, m in manager.memory.messages()] == [m["content"] for m in SIX[:3]]
    assert [m["content"] for m in ours.messages[1:]] == [m["content"] for m in SIX[3:]]


@pytest.mark.parametrize("window", ["8000", float("nan")])
def test_a_window_that_is_not_a_number_never_breaks_a_structured_reduction(embedder, window):
    model = StructuredScriptedModel()
    model.update_config(context_window_limit=window)
    manager = manager_for(embedder, summary_ratio=0.5, preserve_recent_messages=2, summary_format="structured")
    agent = reduced_explicitly(manager, model)  # before: TypeError / ValueError inside reduce_context
    assert len(agent.messages) == 4 and manager.structured_summary is not None


# ------------------------------------------------------------------ issue 15: the Strands seam and the options


@pytest.mark.parametrize("name", ["_generate_summary", "_summarize_oldest", "_adjust_split_point_for_tool_pairs"])
def test_the_strands_methods_we_override_still_exist(name):
    """Fails loudly if Strands renames a method we hook: archiving would otherwise silently stop."""
    base = getattr(SummarizingConversationManager, name, None)
    assert callable(base), f"Strands' SummarizingConversationManager.{name} is gone: the manager would not archive"
    ours = getattr(SemanticSummarizingConversationManager, name)
    assert ours is not base and getattr(ours, "__override__", False), f"{name} is overridden and marked @override"
    check_strands_compatibility()


def test_construction_fails_if_strands_renamed_the_hooked_method(monkeypatch, embedder):
    monkeypatch.delattr(SummarizingConversationManager, "_generate_summary")
    with pytest.raises(SemanticMemoryError, match="_generate_summary"):
        SemanticSummarizingConversationManager(embedder=embedder)


def test_memory_together_with_archive_options_raises(embedder):
    memory = SemanticMemory(embedder=embedder)
    with pytest.raises(ConfigurationError, match="archive, semantic_search_top_k") as raised:
        SemanticSummarizingConversationManager(memory=memory, semantic_search_top_k=5, archive=object())
    assert "memory=" in str(raised.value)
    manager = SemanticSummarizingConversationManager(memory=memory, preserve_recent_messages=4)
    assert manager.memory is memory


def test_archive_path_reaches_the_memory(embedder, tmp_path):
    pytest.importorskip("strands_semantic_memory.archives.sqlite")
    path = tmp_path / "archive.sqlite3"
    manager = SemanticSummarizingConversationManager(embedder=embedder, archive_path=path)
    manager.memory.add([{"role": "user", "content": [{"text": PLANTED_TURN}]}])
    assert type(manager.memory.archive).__name__ == "SqliteArchive"
    assert path.exists()
    with pytest.raises(ConfigurationError, match="archive_path"):
        SemanticSummarizingConversationManager(memory=manager.memory, archive_path=path)


@pytest.mark.parametrize(
    "options, named",
    [
        ({"summary_format": "yaml"}, "summary_format"),
        ({"summary_schema": dict}, "summary_schema"),
        ({"summary_schema": SemanticMemory}, "summary_schema"),
        ({"hard_limit": 1.5}, "hard_limit"),
        ({"hard_limit": 0.6, "proactive_compression": {"compression_threshold": 0.7}}, "hard_limit"),
        ({"on_summary_failure": "ignore"}, "on_summary_failure"),
        ({"summary_filter": "tools"}, "summary_filter"),
    ],
)
def test_invalid_compaction_options_name_the_option(embedder, options, named):
    with pytest.raises(ConfigurationError, match=named):
        SemanticSummarizingConversationManager(embedder=embedder, **options)


# ---------------------------------------------------------------------- get_state's cached archive string


def archive_payload(manager):
    from strands_semantic_memory.conversation_manager.semantic_summarizing_conversation_manager import STATE_KEY

    return manager.get_state()[STATE_KEY]


def note(text):
    return {"role": "user", "content": [{"text": text}], "tracking_id": f"note-{text}"}


def test_get_state_reuses_the_archive_string_until_the_archive_changes(embedder):
    manager = manager_for(embedder)
    manager.memory.add([note("the locker code is 4471"), note("bring the blue folder")])
    manager.memory.embed_pending()  # the vectors change the state too: let them land before comparing
    first = archive_payload(manager)
    assert archive_payload(manager) is first  # nothing changed: the same string, not re-serialized
    manager.memory.search("locker")  # reading changes nothing
    assert archive_payload(manager) is first

    manager.memory.add([note("the locker code is 4471")])  # the same message again: nothing changes
    assert archive_payload(manager) is first

    manager.memory.add([note("the train leaves at nine")])
    manager.memory.embed_pending()
    after_archive = archive_payload(manager)
    assert after_archive is not first and "train leaves" in after_archive

    manager.memory.forget(query="locker code")
    after_forget = archive_payload(manager)
    assert after_forget is not after_archive and "4471" not in after_forget

    manager.memory.evict_oldest(1)
    after_evict = archive_payload(manager)
    assert after_evict is not after_forget and "blue folder" not in after_evict


def test_get_state_follows_a_restore_and_an_option_change(embedder):
    manager = manager_for(embedder)
    manager.memory.add([note("the wifi password is tulip-42")])
    saved = manager.memory.to_state()
    manager.memory.add([note("the meeting moved to room 7")])
    before = archive_payload(manager)
    assert "room 7" in before

    manager.memory.load_state(saved)
    restored = archive_payload(manager)
    assert "room 7" not in restored and "tulip-42" in restored

    manager.memory.configure(top_k=7)  # options are part of the saved archive state
    assert '"top_k":7' in archive_payload(manager)
    manager.memory.configure(context_radius=5)
    assert '"context_radius":5' in archive_payload(manager)


def test_by_default_every_message_is_archived_once_as_it_is_added(embedder):
    """``archive_when="added"``: the archive holds the whole conversation, each message once, the summary never."""
    model = ScriptedModel(max_input_chars=LIMIT)
    manager = manager_for(embedder)
    agent = make_agent(model, manager)
    agent(PLANTED_TURN)
    assert len(manager.memory) == 2, "archived at the end of the invocation, before any overflow"
    for turn in TOPIC_TURNS:
        agent(turn)
    assert model.overflows >= 1 and model.summary_requests
    texts = [all_texts([m]) for _, m in manager.memory.messages()]
    assert len(texts) == 2 * (len(TOPIC_TURNS) + 1) and len(set(texts)) == len(texts)
    assert texts[0] == PLANTED_TURN
    assert all(all_texts([manager.summary_message]) != t for t in texts)
    sessions = {manager.memory.record(i).session_id for i in manager.memory.indices}
    assert sessions == {agent.session_id}
