"""Memory across sessions through real Agents: what a user said in one session comes back in a new one.

Each session builds everything anew over the user's durable SQLite file, as a new process would (the manager, the
hook, the agent); the model is scripted and records every request, so a test reads what reached the model.
"""

from __future__ import annotations

import pytest
from strands import Agent
from strands.session.file_session_manager import FileSessionManager

from strands_semantic_memory import SemanticMemoryHook, SemanticSummarizingConversationManager
from strands_semantic_memory.errors import ConfigurationError
from strands_semantic_memory.messages import render_message
from tests.support.scripted_model import ScriptedModel

FACT = "For the record: my storage locker code is 4417-PLUM and the locker is in Harwick Street."
QUESTION = "What is the code of my storage locker on Harwick Street?"
CHATTER = [
    "Can you suggest a name for a grey cat?",
    "What is a good stretch for the lower back?",
    "How long should I boil an egg for a soft yolk?",
]


def call_input(request) -> str:
    return "\n".join(render_message(m) for m in request["messages"])


def session(
    path, embedder, user_id, *, session_id=None, turns=(), clock=None, storage_dir=None, hook=None, **manager_options
):
    """One session in its own agent, everything built anew over the user's file; returns (agent, model, manager)."""
    model = ScriptedModel(context_window_limit=200_000)
    manager = SemanticSummarizingConversationManager(
        archive_path=path, user_id=user_id, embedder=embedder, embedding="inline", clock=clock, **manager_options
    )
    kwargs = {}
    if storage_dir is not None:
        kwargs["session_manager"] = FileSessionManager(session_id=session_id, storage_dir=str(storage_dir))
    agent = Agent(
        model=model,
        conversation_manager=manager,
        hooks=[hook or SemanticMemoryHook()],
        callback_handler=None,
        **kwargs,
    )
    for turn in turns:
        agent(turn)
    return agent, model, manager


def test_a_fact_told_in_one_session_reaches_the_model_in_the_next(tmp_path, embedder):
    path = tmp_path / "alice.db"
    _, _, first = session(path, embedder, "alice", turns=[FACT, *CHATTER])
    assert len(first.memory) == 2 * (1 + len(CHATTER)), "every message archived as it was added, none overflowed"
    first.memory.close()

    agent, model, second = session(path, embedder, "alice", turns=[QUESTION])
    answering = call_input(model.chat_requests[-1])
    assert "4417-PLUM" in answering, "the fact from the first session reached the answering call"
    block = answering.split(QUESTION)[0]
    assert "4417-PLUM" in block and block.count(FACT) == 1
    sessions = {second.memory.record(i).session_id for i in second.memory.indices}
    assert len(sessions) == 2 and None not in sessions, "each record carries the session it was said in"
    second.memory.close()


def test_without_a_named_user_a_new_session_recalls_only_its_own(tmp_path, embedder):
    path = tmp_path / "anonymous.db"
    _, _, first = session(path, embedder, None, turns=[FACT])
    first.memory.close()
    _, model, second = session(path, embedder, None, turns=[QUESTION])
    assert "4417-PLUM" not in call_input(model.chat_requests[-1]), "naming the user turns on recall across sessions"
    second.memory.close()


def test_one_users_memory_never_reaches_another(tmp_path, embedder):
    _, _, alice = session(tmp_path / "alice.db", embedder, "alice", turns=[FACT])
    alice.memory.close()
    _, model, bob = session(tmp_path / "bob.db", embedder, "bob", turns=[*CHATTER, QUESTION])
    assert all("4417" not in call_input(r) for r in model.chat_requests)
    bob.memory.close()
    with pytest.raises(ConfigurationError, match="alice"):
        session(tmp_path / "alice.db", embedder, "bob")


def test_what_the_call_still_holds_is_not_injected_again(tmp_path, embedder):
    hook = SemanticMemoryHook()
    _, model, manager = session(tmp_path / "alice.db", embedder, "alice", turns=[FACT, QUESTION], hook=hook)
    answering = call_input(model.chat_requests[-1])
    assert answering.count(FACT) == 1, "the fact is in the history; the hook does not add it again"
    found = hook.last_enrichment
    assert all(FACT not in render_message(m) for p in found.passages for m in p.messages)
    manager.memory.close()


def test_leaving_keeps_only_what_overflowed(tmp_path, embedder):
    _, _, manager = session(tmp_path / "alice.db", embedder, "alice", turns=[FACT], archive_when="leaving")
    assert len(manager.memory) == 0, "a session that never overflowed archives nothing"
    manager.memory.close()
    with pytest.raises(ConfigurationError, match="archive_when"):
        SemanticSummarizingConversationManager(archive_when="sometimes")


def test_the_session_id_comes_from_the_session_manager_and_a_restored_session_archives_nothing_twice(
    tmp_path, embedder
):
    path, sessions = tmp_path / "alice.db", tmp_path / "sessions"
    _, _, first = session(path, embedder, "alice", session_id="monday", storage_dir=sessions, turns=[FACT])
    archived = len(first.memory)
    assert {first.memory.record(i).session_id for i in first.memory.indices} == {"monday"}
    first.memory.close()
    agent, _, restored = session(path, embedder, "alice", session_id="monday", storage_dir=sessions, turns=CHATTER[:1])
    assert len(agent.messages) == 4, "the session manager restored the first turn"
    assert len(restored.memory) == archived + 2, "the restored turn was not archived again"
    restored.memory.close()


def test_passages_show_when_they_were_said(tmp_path, embedder):
    monday = 1_780_000_000.0  # 2026-05-28 20:26 UTC
    _, _, first = session(tmp_path / "alice.db", embedder, "alice", turns=[FACT], clock=lambda: monday)
    first.memory.close()
    _, model, second = session(tmp_path / "alice.db", embedder, "alice", turns=[QUESTION])
    assert "2026-05-28 20:26" in call_input(model.chat_requests[-1])
    second.memory.close()


def test_a_manager_serves_one_agent(embedder):
    manager = SemanticSummarizingConversationManager(embedder=embedder)
    first = Agent(model=ScriptedModel(), conversation_manager=manager, callback_handler=None)
    with pytest.raises(ConfigurationError, match="already serves another agent"):
        Agent(model=ScriptedModel(), conversation_manager=manager, callback_handler=None)
    assert first.conversation_manager is manager


def test_the_conversation_tools_of_an_unnamed_memory_keep_to_the_agents_session(tmp_path, embedder):
    from strands_semantic_memory import memory_tools

    path = tmp_path / "shared.db"
    _, _, first = session(path, embedder, None, turns=[FACT])
    first.memory.close()
    agent, _, second = session(path, embedder, None, turns=CHATTER[:1])
    for tool in memory_tools(second, allow_forget=True):
        agent.tool_registry.register_tool(tool)
    found = agent.tool.conversation_search(query="storage locker code", record_direct_tool_call=False)
    assert "4417" not in str(found), "another session's words, found through the tool"
    read = agent.tool.conversation_read(start=0, end=1, record_direct_tool_call=False)
    assert "4417" not in str(read)
    agent.tool.conversation_forget(query="4417-PLUM", record_direct_tool_call=False)
    assert any("4417-PLUM" in render_message(m) for _, m in second.memory.messages()), "nothing of it deleted"
    second.memory.close()


def test_a_snapshot_restore_does_not_archive_the_managers_summary(tmp_path, embedder):
    agent, _, manager = session(
        tmp_path / "alice.db", embedder, "alice", turns=[FACT, *CHATTER], preserve_recent_messages=2
    )
    manager.reduce_context(agent)
    summary = manager.summary_message
    assert summary is not None
    snapshot = agent.take_snapshot(preset="session")
    agent.load_snapshot(snapshot)  # a deep copy of the messages: the summary is another object now
    agent(QUESTION)
    texts = [render_message(m) for _, m in manager.memory.messages()]
    assert render_message(summary) not in texts, "the manager's summary is never archived"
    manager.memory.close()


def test_stash_entries_carry_their_session_in_any_view():
    from strands_semantic_memory.storage._storage import stash_session

    assert stash_session("context/monday/scopes/agent/a1/tool_0") == "monday"
    assert stash_session("context//scopes/agent/a1") is None
    assert stash_session("notes/context/monday/x") is None
    assert stash_session("context/bad\x00id/x") is None


def test_the_storage_search_leaves_out_the_calls_own_stash_entries(tmp_path, embedder):
    """Strands stashes the question before the call: it must not be its own best hit (nor set the cut by itself)."""
    from strands.experimental.context_manager import ContextManager

    from strands_semantic_memory import SemanticStorage
    from strands_semantic_memory.storage import BudgetSummarization

    def chat():
        storage = SemanticStorage(archive_path=tmp_path / "alice.db", user_id="alice", embedder=embedder)
        hook = SemanticMemoryHook(storage=storage)
        model = ScriptedModel(context_window_limit=200_000)
        agent = Agent(
            model=model,
            context_manager=ContextManager(strategies=[BudgetSummarization()]),
            storage=storage,
            plugins=[hook],
            callback_handler=None,
        )
        return agent, model, hook, storage

    agent, _, _, storage = chat()
    agent(FACT)
    storage.close()
    agent, model, hook, storage = chat()
    agent(QUESTION)
    found = hook.last_enrichment
    assert found.best_similarity is not None and found.best_similarity < 0.99, "the question did not find itself"
    assert "4417-PLUM" in call_input(model.chat_requests[-1])
    assert all(QUESTION not in render_message(m) for p in found.passages for m in p.messages)
    storage.close()


def test_one_storage_shared_by_two_users_agents_never_mixes_them(embedder):
    """Issue 39, point 2: one unnamed SemanticStorage behind two agents' ContextManagers, with the hook, at once."""
    import threading

    from strands.experimental.context_manager import ContextManager

    from strands_semantic_memory import SemanticStorage
    from strands_semantic_memory.storage import BudgetSummarization

    storage = SemanticStorage(embedder=embedder, embedding="inline")

    def agent_for():
        model = ScriptedModel(context_window_limit=200_000)
        agent = Agent(
            model=model,
            context_manager=ContextManager(strategies=[BudgetSummarization()]),
            storage=storage,
            plugins=[SemanticMemoryHook(storage=storage)],
            callback_handler=None,
        )
        return agent, model

    alice, _ = agent_for()
    bob, bob_model = agent_for()  # each agent its own Strands session id
    alice("My wifi password is tulip-42, the router is in the hall.")
    errors = []

    def talk(agent, turns):
        try:
            for turn in turns:
                agent(turn)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [
        threading.Thread(target=talk, args=(alice, ["And the guest network password is fern-7.", *CHATTER])),
        threading.Thread(target=talk, args=(bob, [*CHATTER, "What is the wifi password?"])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert all("tulip" not in call_input(r) and "fern" not in call_input(r) for r in bob_model.chat_requests)
    memory = storage.memory
    alices = [memory.record(i) for i in memory.indices if "tulip" in render_message(memory.get(i))]
    assert alices and {r.session_id for r in alices} == {alice.session_id} != {bob.session_id}
    storage.close()


def test_two_users_at_once_on_every_archive_each_recall_only_their_own(store_kind, request, embedder):
    """Issue 37: concurrent agents of two named users, on each kind of archive; each recalls their own words only."""
    import threading

    from tests.support.archives import archive_for

    secrets = {"alice": "My locker code is 4417-PLUM.", "bob": "My locker code is 9031-FIG."}

    def manager_for(user):
        archive = archive_for(store_kind, request, user)
        options = {"user_id": user} if archive is None else {"archive": archive}
        return SemanticSummarizingConversationManager(embedder=embedder, embedding="inline", **options)

    managers = {user: manager_for(user) for user in secrets}  # one memory per user, kept across their sessions
    errors, models = [], {}

    def sessions_of(user):
        try:
            manager = managers[user]
            first = Agent(
                model=ScriptedModel(), conversation_manager=manager, hooks=[SemanticMemoryHook()], callback_handler=None
            )
            first(secrets[user])
            first(CHATTER[0])
            again = SemanticSummarizingConversationManager(memory=manager.memory)  # a new session, same memory
            models[user] = ScriptedModel()
            second = Agent(
                model=models[user], conversation_manager=again, hooks=[SemanticMemoryHook()], callback_handler=None
            )
            second("What is my locker code?")
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=sessions_of, args=(user,)) for user in secrets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    alice, bob = (call_input(models[u].chat_requests[-1]) for u in ("alice", "bob"))
    assert "4417-PLUM" in alice and "9031" not in alice
    assert "9031-FIG" in bob and "4417" not in bob
    for manager in managers.values():
        manager.memory.close()
