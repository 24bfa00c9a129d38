"""Strands' own ``SummarizingConversationManager`` tests, run against ``SemanticSummarizingConversationManager``.

Adapted from strands-agents 1.62.0 (https://github.com/strands-agents/sdk-python, source distribution on PyPI):
``tests/strands/agent/test_summarizing_conversation_manager.py`` (all 40 tests), the 15 proactive-compression tests
of ``tests/strands/agent/test_conversation_manager.py``, the two summarizing tests of
``tests/strands/test_tracking_id_history_invariant.py`` and the summarizing restore test of
``tests/strands/session/test_repository_session_manager.py``.
Copyright Amazon.com, Inc. or its affiliates. All Rights Reserved. Licensed under the Apache License, Version 2.0
(http://www.apache.org/licenses/LICENSE-2.0).

A user who swaps Strands' manager for this one keeps working code: these tests are the contract (issue 39, point
12). The archive behind the manager is real (the bundled embedding model); the agents are Strands' own stand-ins
(``MockAgent``, ``Mock`` and ``MagicMock`` agents), kept because they are what Strands' tests hand the manager and the
manager must accept what Strands accepts.

Changes:

- ``SummarizingConversationManager(...)`` in a test is ``make_manager(...)``: this library's manager with the same
  arguments, on the bundled embedding model, closed after the test; the ``summarizing_manager`` fixture is built
  the same way.
- ``MockedModelProvider`` (from Strands' test fixtures, not shipped) is ``tests.support.scripted_model.ScriptedModel``
  with the same replies; the overflow-once model of the tracking-id tests is built on it.
- Pinned to Strands' module names: ``test_reduce_context_raises_on_summarization_failure`` patched
  ``strands.agent.conversation_manager.summarizing_conversation_manager.logger``; this manager logs the same error
  (``"Summarization failed: ..."``) through its own module's logger, so the test reads it with ``caplog``. The two
  no-op tool tests patch ``...summarizing_conversation_manager.ToolRegistry`` and run unchanged: the manager
  summarizes through Strands' own code, which uses that name.
- ``test_conversation_manager.py``'s proactive-compression tests use a minimal ``ConversationManager`` whose
  ``reduce_context`` counts its calls (or raises); here that is this manager with ``reduce_context`` counting its
  calls (or raising).
- Strands' tests invoke a ``BeforeModelCallEvent``'s callbacks synchronously (``registry.invoke_callbacks``);
  this manager's callbacks for that event are coroutines (its reductions, Strands' proactive compression included,
  run in a worker thread, never on the event loop), so the tests invoke them as the agent loop does:
  ``invoke_callbacks_async``.
- The session restore test's ``existing_session_manager`` is Strands' ``FileSessionManager`` on a session created
  in a temporary folder, instead of a ``RepositorySessionManager`` on Strands' mocked repository (a test fixture,
  not shipped).

Strands' tests that cannot apply:

- ``test_conversation_manager.py``'s ``SlidingWindowConversationManager``, ``NullConversationManager`` and
  ``per_turn`` tests, and its ``pin_first`` tests (all on the sliding window): they test other managers.
- The other tests of ``test_tracking_id_history_invariant.py`` and ``test_repository_session_manager.py``: they do
  not use a summarizing manager.
"""

from __future__ import annotations

import asyncio
import logging
from typing import cast
from unittest.mock import MagicMock, Mock, patch

import pytest
from strands.agent.agent import Agent
from strands.agent.conversation_manager.summarizing_conversation_manager import DEFAULT_SUMMARIZATION_PROMPT
from strands.hooks.events import BeforeModelCallEvent
from strands.hooks.registry import HookRegistry
from strands.models.model import Model
from strands.session.file_session_manager import FileSessionManager
from strands.types.content import ContentBlock, Messages
from strands.types.exceptions import ContextWindowOverflowException
from strands.types.session import SessionAgent, SessionMessage

from strands_semantic_memory import SemanticSummarizingConversationManager
from strands_semantic_memory.testing import ScriptedModel


@pytest.fixture
def anyio_backend() -> str:
    """The async tests run on asyncio, as Strands' do."""
    return "asyncio"


@pytest.fixture
def make_manager(embedder):
    """``SummarizingConversationManager(...)`` of Strands' tests: this library's manager, closed after the test."""
    made: list[SemanticSummarizingConversationManager] = []

    def make(cls=SemanticSummarizingConversationManager, **kwargs):
        manager = cls(embedder=embedder, **kwargs)
        made.append(manager)
        return manager

    yield make
    for manager in made:
        manager.memory.close()


def replying(text):
    """A scripted model answering every call, chat or summary, with ``text`` (``MockedModelProvider`` in Strands)."""
    return ScriptedModel(lambda messages, system_prompt, is_summary: text)


# ================================================================== test_summarizing_conversation_manager.py


async def _mock_model_stream(response_text):
    """Create an async generator that yields stream events for a text response.

    This simulates what a real Model.stream() returns so that process_stream() can
    reconstruct the assistant message.
    """
    yield {"messageStart": {"role": "assistant"}}
    yield {"contentBlockStart": {"start": {}}}
    yield {"contentBlockDelta": {"delta": {"text": response_text}}}
    yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": "end_turn"}}


async def _mock_model_stream_error(error):
    """Async generator that raises an exception, simulating a model failure."""
    raise error
    yield  # pragma: no cover – makes this a generator


class MockAgent:
    """Mock agent for testing summarization.

    In the default path (no summarization_agent) the manager calls
    ``agent.aux_model.stream()`` directly, so the model attribute must return a
    proper async iterable; ``aux_model`` mirrors the real agent's default of
    ``model``. When used as a *summarization_agent* the manager still calls
    ``agent("…")``, so the ``__call__`` interface is kept.
    """

    def __init__(self, summary_response="This is a summary of the conversation."):
        self.summary_response = summary_response
        self.system_prompt = None
        self.messages = []
        self.model = Mock()
        self.model.stream = Mock(side_effect=lambda *a, **kw: _mock_model_stream(self.summary_response))
        self.aux_model = self.model
        self.call_tracker = Mock()
        self.tool_registry = Mock()
        self.tool_names = []
        self._default_structured_output_model = None

    def __call__(self, prompt):
        """Mock agent call that returns a summary."""
        self.call_tracker(prompt)
        result = Mock()
        result.message = {"role": "assistant", "content": [{"text": self.summary_response}]}
        return result


def create_mock_agent(summary_response="This is a summary of the conversation.") -> Agent:
    """Factory function that returns a properly typed MockAgent."""
    return cast("Agent", MockAgent(summary_response))


@pytest.fixture
def mock_agent():
    """Fixture for mock agent."""
    return create_mock_agent()


@pytest.fixture
def summarizing_manager(make_manager):
    """Fixture for summarizing conversation manager with default settings."""
    return make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=2,
    )


def test_init_default_values(make_manager):
    """Test initialization with default values."""
    manager = make_manager()

    assert manager.summarization_agent is None
    assert manager.summary_ratio == 0.3
    assert manager.preserve_recent_messages == 10


def test_init_clamps_summary_ratio(make_manager):
    """Test that summary_ratio is clamped to valid range."""
    # Test lower bound
    manager = make_manager(summary_ratio=0.05)
    assert manager.summary_ratio == 0.1

    # Test upper bound
    manager = make_manager(summary_ratio=0.95)
    assert manager.summary_ratio == 0.8


def test_reduce_context_raises_when_no_agent(make_manager):
    """Test that reduce_context raises exception when agent has no messages (reactive mode)."""
    manager = make_manager()

    # Create a mock agent with no messages
    mock_agent = Mock()
    empty_messages: Messages = []
    mock_agent.messages = empty_messages

    # Reactive mode (e is set) should raise
    with pytest.raises(ContextWindowOverflowException, match="insufficient messages for summarization"):
        manager.reduce_context(mock_agent, e=RuntimeError("overflow"))


def test_reduce_context_with_summarization(summarizing_manager, mock_agent):
    """Test reduce_context with summarization enabled."""
    test_messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
        {"role": "assistant", "content": [{"text": "Response 2"}]},
        {"role": "user", "content": [{"text": "Message 3"}]},
        {"role": "assistant", "content": [{"text": "Response 3"}]},
    ]
    mock_agent.messages = test_messages

    summarizing_manager.reduce_context(mock_agent)

    # Should have: 1 summary message + 2 preserved recent messages + remaining from summarization
    assert len(mock_agent.messages) == 4

    # First message should be the summary
    assert mock_agent.messages[0]["role"] == "user"
    first_content = mock_agent.messages[0]["content"][0]
    assert "text" in first_content and "This is a summary of the conversation." in first_content["text"]

    # Recent messages should be preserved
    assert "Message 3" in str(mock_agent.messages[-2]["content"])
    assert "Response 3" in str(mock_agent.messages[-1]["content"])


def test_reduce_context_summary_message_has_durable_id(summarizing_manager, mock_agent):
    """The generated summary message should carry a durable tracking id like any other message."""
    mock_agent.messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
        {"role": "assistant", "content": [{"text": "Response 2"}]},
        {"role": "user", "content": [{"text": "Message 3"}]},
        {"role": "assistant", "content": [{"text": "Response 3"}]},
    ]

    summarizing_manager.reduce_context(mock_agent)

    summary_message = mock_agent.messages[0]
    assert isinstance(summary_message.get("tracking_id"), str)
    assert summary_message["tracking_id"]


def test_reduce_context_too_few_messages_raises_exception(summarizing_manager, mock_agent, make_manager):
    """Test that reduce_context raises exception when there are too few messages to summarize effectively."""
    # Create a scenario where calculation results in 0 messages to summarize
    manager = make_manager(
        summary_ratio=0.1,  # Very small ratio
        preserve_recent_messages=5,  # High preservation
    )

    insufficient_test_messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
    ]
    mock_agent.messages = insufficient_test_messages  # 5 messages, preserve_recent_messages=5, so nothing to summarize

    # Reactive mode (e is set) should raise
    with pytest.raises(ContextWindowOverflowException, match="insufficient messages for summarization"):
        manager.reduce_context(mock_agent, e=RuntimeError("overflow"))


def test_reduce_context_insufficient_messages_for_summarization(mock_agent, make_manager):
    """Test reduce_context when there aren't enough messages to summarize."""
    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=3,
    )

    insufficient_messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
    ]
    mock_agent.messages = insufficient_messages

    # Reactive mode (e is set) should raise
    with pytest.raises(ContextWindowOverflowException, match="insufficient messages for summarization"):
        manager.reduce_context(mock_agent, e=RuntimeError("overflow"))


def test_reduce_context_raises_on_summarization_failure(make_manager, caplog):
    """Test that reduce_context raises exception when model.stream() fails."""
    failing_agent = Mock()
    failing_agent.model = Mock()
    failing_agent.model.stream = Mock(side_effect=lambda *a, **kw: _mock_model_stream_error(Exception("Agent failed")))
    failing_agent.aux_model = failing_agent.model
    failing_agent_messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
        {"role": "assistant", "content": [{"text": "Response 2"}]},
    ]
    failing_agent.messages = failing_agent_messages

    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=1,
    )

    # Changed: Strands patches its own module's logger; this manager logs the same error through its own.
    with caplog.at_level(logging.ERROR, logger="strands_semantic_memory"):
        # Reactive mode (e is set) should raise
        with pytest.raises(Exception, match="Agent failed"):
            manager.reduce_context(failing_agent, e=RuntimeError("overflow"))

    # Should log the error
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and r.name.startswith("strands_semantic_memory")]
    assert len(errors) == 1 and "Summarization failed" in errors[0].getMessage()


def test_generate_summary(summarizing_manager, mock_agent):
    """Test the _generate_summary method."""
    test_messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    summary = summarizing_manager._generate_summary(test_messages, mock_agent)

    summary_content = summary["content"][0]
    assert "text" in summary_content and summary_content["text"] == "This is a summary of the conversation."


def test_generate_summary_with_tool_content(summarizing_manager, mock_agent):
    """Test summary generation with tool use and results."""
    tool_messages: Messages = [
        {"role": "user", "content": [{"text": "Use a tool"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "123", "name": "test_tool", "input": {}}}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "123", "content": [{"text": "Tool output"}], "status": "success"}}
            ],
        },
    ]

    summary = summarizing_manager._generate_summary(tool_messages, mock_agent)

    summary_content = summary["content"][0]
    assert "text" in summary_content and summary_content["text"] == "This is a summary of the conversation."


def test_generate_summary_raises_on_model_failure(make_manager):
    """Test that _generate_summary raises exception when model.stream() fails."""
    failing_agent = Mock()
    failing_agent.model = Mock()
    failing_agent.model.stream = Mock(side_effect=lambda *a, **kw: _mock_model_stream_error(Exception("Agent failed")))
    failing_agent.aux_model = failing_agent.model

    manager = make_manager()

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    # Should raise the exception from the model
    with pytest.raises(Exception, match="Agent failed"):
        manager._generate_summary(messages, failing_agent)


def test_adjust_split_point_for_tool_pairs(summarizing_manager):
    """Test that the split point is adjusted to avoid breaking ToolUse/ToolResult pairs."""
    messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "123", "name": "test_tool", "input": {}}}]},
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "123",
                        "content": [{"text": "Tool output"}],
                        "status": "success",
                    }
                }
            ],
        },
        {"role": "assistant", "content": [{"text": "Response after tool"}]},
    ]

    # If we try to split at message 2 (the ToolResult), it should move forward to message 3
    adjusted_split = summarizing_manager._adjust_split_point_for_tool_pairs(messages, 2)
    assert adjusted_split == 3  # Should move to after the ToolResult

    # If we try to split at message 3, it should be fine (no tool issues)
    adjusted_split = summarizing_manager._adjust_split_point_for_tool_pairs(messages, 3)
    assert adjusted_split == 3

    # If we try to split at message 1 (toolUse with following toolResult), it should be valid
    adjusted_split = summarizing_manager._adjust_split_point_for_tool_pairs(messages, 1)
    assert adjusted_split == 1  # Should be valid because toolResult follows


def test_apply_management_no_op(summarizing_manager, mock_agent):
    """Test apply_management does not modify messages (no-op behavior)."""
    apply_test_messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi"}]},
        {"role": "user", "content": [{"text": "More messages"}]},
        {"role": "assistant", "content": [{"text": "Even more"}]},
    ]
    mock_agent.messages = apply_test_messages
    original_messages = mock_agent.messages.copy()

    summarizing_manager.apply_management(mock_agent)

    # Should never modify messages - summarization only happens on context overflow
    assert mock_agent.messages == original_messages


def test_summarization_agent_reasoning_blocks_are_dropped_from_summary(make_manager):
    """A reasoning summarizer's reply is re-roled as user with only its text kept."""

    class ReasoningMockAgent(MockAgent):
        def __call__(self, prompt):
            result = Mock()
            result.message = {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "thinking", "signature": "sig"}}},
                    {"text": "Summary"},
                ],
            }
            return result

    manager = make_manager(summarization_agent=cast("Agent", ReasoningMockAgent()))
    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    tru_summary = manager._generate_summary(messages, create_mock_agent())

    exp_summary = {"role": "user", "content": [{"text": "Summary"}]}
    assert tru_summary == exp_summary


def test_init_with_custom_parameters(make_manager):
    """Test initialization with custom parameters."""
    mock_agent = create_mock_agent()

    manager = make_manager(
        summary_ratio=0.4,
        preserve_recent_messages=5,
        summarization_agent=mock_agent,
    )
    assert manager.summary_ratio == 0.4
    assert manager.preserve_recent_messages == 5
    assert manager.summarization_agent == mock_agent
    assert manager.summarization_system_prompt is None


def test_init_with_both_agent_and_prompt_raises_error(make_manager):
    """Test that providing both agent and system prompt raises ValueError."""
    mock_agent = create_mock_agent()
    custom_prompt = "Custom summarization prompt"

    with pytest.raises(ValueError, match="Cannot provide both summarization_agent and summarization_system_prompt"):
        make_manager(
            summarization_agent=mock_agent,
            summarization_system_prompt=custom_prompt,
        )


def test_uses_summarization_agent_when_provided(make_manager):
    """Test that summarization_agent is used when provided."""
    summary_agent = create_mock_agent("Custom summary from dedicated agent")
    manager = make_manager(summarization_agent=summary_agent)

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    parent_agent = create_mock_agent("Parent agent summary")
    summary = manager._generate_summary(messages, parent_agent)

    # Should use the dedicated summarization agent, not the parent agent
    summary_content = summary["content"][0]
    assert "text" in summary_content and summary_content["text"] == "Custom summary from dedicated agent"

    # Assert that the summarization agent was called
    summary_agent.call_tracker.assert_called_once()


def test_default_path_calls_model_directly(make_manager):
    """Test that the default path (no summarization_agent) calls model.stream() directly."""
    manager = make_manager()

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    parent_agent = create_mock_agent("Parent agent summary")
    summary = manager._generate_summary(messages, parent_agent)

    # Should use the model directly (via model.stream)
    summary_content = summary["content"][0]
    assert "text" in summary_content and summary_content["text"] == "Parent agent summary"

    # model.stream() should have been called
    parent_agent.model.stream.assert_called_once()

    # The agent itself should NOT have been called (no re-entrant invocation)
    parent_agent.call_tracker.assert_not_called()


def test_default_path_passes_correct_system_prompt(make_manager):
    """Test that the default path passes the correct system prompt to model.stream()."""
    manager = make_manager()

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    parent_agent = create_mock_agent()
    manager._generate_summary(messages, parent_agent)

    # Verify model.stream() was called with the default summarization system prompt
    call_kwargs = parent_agent.model.stream.call_args
    assert call_kwargs.kwargs["system_prompt"] == DEFAULT_SUMMARIZATION_PROMPT


def test_default_path_uses_custom_system_prompt(make_manager):
    """Test that custom system prompt is passed to model.stream() in default path."""
    custom_prompt = "Custom system prompt for summarization"
    manager = make_manager(summarization_system_prompt=custom_prompt)
    mock_agent = create_mock_agent()

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    manager._generate_summary(messages, mock_agent)

    # Verify model.stream() was called with the custom system prompt
    call_kwargs = mock_agent.model.stream.call_args
    assert call_kwargs.kwargs["system_prompt"] == custom_prompt


def test_default_path_does_not_modify_agent_state(make_manager):
    """Test that the default path does not modify any agent state."""
    manager = make_manager()
    mock_agent = create_mock_agent()

    # Set initial state
    original_system_prompt = "Original system prompt"
    original_messages: Messages = [{"role": "user", "content": [{"text": "Original message"}]}]
    mock_agent.system_prompt = original_system_prompt
    mock_agent.messages = original_messages.copy()
    original_tool_registry = mock_agent.tool_registry

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    manager._generate_summary(messages, mock_agent)

    # Agent state should be completely untouched
    assert mock_agent.system_prompt == original_system_prompt
    assert mock_agent.messages == original_messages
    assert mock_agent.tool_registry is original_tool_registry


def test_default_path_does_not_modify_agent_state_on_exception(make_manager):
    """Test that agent state is untouched when model.stream() fails in default path."""
    manager = make_manager()

    mock_agent = Mock()
    mock_agent.system_prompt = "Original prompt"
    agent_messages: Messages = [{"role": "user", "content": [{"text": "Original"}]}]
    mock_agent.messages = agent_messages
    mock_agent.model = Mock()
    mock_agent.model.stream = Mock(
        side_effect=lambda *a, **kw: _mock_model_stream_error(Exception("Summarization failed"))
    )
    mock_agent.aux_model = mock_agent.model

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    with pytest.raises(Exception, match="Summarization failed"):
        manager._generate_summary(messages, mock_agent)

    # Agent state should be untouched (default path never modifies it)
    assert mock_agent.system_prompt == "Original prompt"
    assert mock_agent.messages == agent_messages


def test_default_path_passes_no_tool_specs(make_manager):
    """Test that model.stream() is called with tool_specs=None in default path."""
    manager = make_manager()

    messages: Messages = [{"role": "user", "content": [{"text": "test"}]}]
    agent = create_mock_agent()

    manager._generate_summary(messages, agent)

    # model.stream() should be called with tool_specs=None
    call_kwargs = agent.model.stream.call_args
    assert call_kwargs.kwargs.get("tool_specs") is None or call_kwargs[0][1] is None


def test_agent_path_state_restoration_with_summarization_agent(make_manager):
    """Test that summarization_agent state is properly restored after summarization."""
    summary_agent = create_mock_agent("Summary from dedicated agent")
    manager = make_manager(summarization_agent=summary_agent)

    # Set initial state on the summarization agent
    original_system_prompt = "Agent original prompt"
    original_messages: Messages = [{"role": "user", "content": [{"text": "Agent original message"}]}]
    summary_agent.system_prompt = original_system_prompt
    summary_agent.messages = original_messages.copy()
    original_tool_registry = summary_agent.tool_registry

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    parent_agent = create_mock_agent("Should not be used")
    manager._generate_summary(messages, parent_agent)

    # Summarization agent state should be restored
    assert summary_agent.system_prompt == original_system_prompt
    assert summary_agent.messages == original_messages
    assert summary_agent.tool_registry is original_tool_registry


def test_agent_path_state_restoration_on_exception(make_manager):
    """Test that summarization_agent state is restored even when it fails."""
    summary_agent = Mock()
    summary_agent.system_prompt = "Original prompt"
    agent_messages: Messages = [{"role": "user", "content": [{"text": "Original"}]}]
    summary_agent.messages = agent_messages
    summary_agent.side_effect = Exception("Summarization failed")
    summary_agent.tool_names = []

    manager = make_manager(summarization_agent=cast("Agent", summary_agent))

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    with pytest.raises(Exception, match="Summarization failed"):
        manager._generate_summary(messages, cast("Agent", Mock()))

    # State should still be restored
    assert summary_agent.system_prompt == "Original prompt"


def test_reduce_context_tool_pair_adjustment_works_with_forward_search(make_manager):
    """Test that tool pair adjustment works correctly with the forward-search logic."""
    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=1,
    )

    mock_agent = create_mock_agent()
    # Create messages where the split point would be adjusted to 0 due to tool pairs
    tool_pair_messages: Messages = [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "123", "name": "test_tool", "input": {}}}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "123", "content": [{"text": "Tool output"}], "status": "success"}}
            ],
        },
        {"role": "user", "content": [{"text": "Latest message"}]},
    ]
    mock_agent.messages = tool_pair_messages

    # With 3 messages, preserve_recent_messages=1, summary_ratio=0.5:
    # messages_to_summarize_count = (3 - 1) * 0.5 = 1
    # But split point adjustment will move forward from the toolUse, potentially increasing count
    manager.reduce_context(mock_agent)
    # Should have summary + remaining messages
    assert len(mock_agent.messages) == 2

    # First message should be the summary
    assert mock_agent.messages[0]["role"] == "user"
    summary_content = mock_agent.messages[0]["content"][0]
    assert "text" in summary_content and "This is a summary of the conversation." in summary_content["text"]

    # Last message should be the preserved recent message
    assert mock_agent.messages[1]["role"] == "user"
    assert mock_agent.messages[1]["content"][0]["text"] == "Latest message"


def test_adjust_split_point_exceeds_message_length(summarizing_manager):
    """Test that split point exceeding message array length raises exception."""
    messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
    ]

    # Try to split at point 5 when there are only 2 messages
    with pytest.raises(ContextWindowOverflowException, match="Split point exceeds message array length"):
        summarizing_manager._adjust_split_point_for_tool_pairs(messages, 5)


def test_adjust_split_point_equals_message_length(summarizing_manager):
    """Test that split point equal to message array length returns unchanged."""
    messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
    ]

    # Split point equals message length (2) - should return unchanged
    result = summarizing_manager._adjust_split_point_for_tool_pairs(messages, 2)
    assert result == 2


def test_adjust_split_point_no_tool_result_at_split(summarizing_manager):
    """Test split point that doesn't contain tool result, ensuring we reach return split_point."""
    messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
    ]

    # Split point message is not a tool result, so it should directly return split_point
    result = summarizing_manager._adjust_split_point_for_tool_pairs(messages, 1)
    assert result == 1


def test_adjust_split_point_tool_result_without_tool_use(summarizing_manager):
    """Test that having tool results without tool uses raises exception."""
    messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "123", "content": [{"text": "Tool output"}], "status": "success"}}
            ],
        },
    ]

    # Has tool result but no tool use - invalid state
    with pytest.raises(ContextWindowOverflowException, match="Unable to trim conversation context!"):
        summarizing_manager._adjust_split_point_for_tool_pairs(messages, 1)


def test_adjust_split_point_tool_result_moves_to_end(summarizing_manager):
    """Test tool result at split point moves forward to valid position at end."""
    messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "123", "content": [{"text": "Tool output"}], "status": "success"}}
            ],
        },
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "456", "name": "different_tool", "input": {}}}]},
    ]

    # Split at message 2 (toolResult) - will move forward to message 3 (toolUse at end is valid)
    result = summarizing_manager._adjust_split_point_for_tool_pairs(messages, 2)
    assert result == 3


def test_adjust_split_point_tool_result_no_forward_position(summarizing_manager):
    """Test tool result at split point where forward search finds no valid position."""
    messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "123", "name": "test_tool", "input": {}}}]},
        {"role": "user", "content": [{"text": "Message between"}]},
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "123", "content": [{"text": "Tool output"}], "status": "success"}}
            ],
        },
    ]

    # Split at message 3 (toolResult) - will try to move forward but no valid position exists
    with pytest.raises(ContextWindowOverflowException, match="Unable to trim conversation context!"):
        summarizing_manager._adjust_split_point_for_tool_pairs(messages, 3)


def test_reduce_context_adjustment_returns_zero(make_manager):
    """Test that tool pair adjustment can return zero, triggering the check at line 122."""
    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=1,
    )

    # Mock the adjustment method to return 0
    def mock_adjust(messages, split_point):
        return 0  # This should trigger the <= 0 check at line 122

    manager._adjust_split_point_for_tool_pairs = mock_adjust

    mock_agent = Mock()
    simple_messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
    ]
    mock_agent.messages = simple_messages

    # The adjustment method will return 0, which should trigger the <= 0 check
    # Reactive mode (e is set) should raise
    with pytest.raises(ContextWindowOverflowException, match="insufficient messages for summarization"):
        manager.reduce_context(mock_agent, e=RuntimeError("overflow"))


def test_summarizing_conversation_manager_properly_records_removed_message_count(make_manager):
    mock_model = replying("Summary")

    simple_messages: Messages = [
        {"role": "user", "content": [{"text": "Message 1"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 2"}]},
        {"role": "assistant", "content": [{"text": "Response 1"}]},
        {"role": "user", "content": [{"text": "Message 3"}]},
        {"role": "assistant", "content": [{"text": "Response 3"}]},
        {"role": "user", "content": [{"text": "Message 4"}]},
        {"role": "assistant", "content": [{"text": "Response 4"}]},
    ]
    agent = Agent(model=mock_model, messages=simple_messages)
    manager = make_manager(summary_ratio=0.5, preserve_recent_messages=1)

    assert manager._summary_message is None
    assert manager.removed_message_count == 0

    manager.reduce_context(agent)
    # Assert the oldest message is the summary message
    assert manager._summary_message["content"][0]["text"] == "Summary"
    # There are 8 messages in the agent messages array, since half will be summarized,
    # 4 will remain plus 1 summary message = 5
    assert (len(agent.messages)) == 5
    # Half of the messages were summarized and removed: 8/2 = 4
    assert manager.removed_message_count == 4

    manager.reduce_context(agent)
    assert manager._summary_message["content"][0]["text"] == "Summary"
    # After the first summary, 5 messages remain. Summarizing again will lead to:
    # 5 - (int(5/2)) (messages to be sumamrized) + 1 (new summary message) = 5 - 2 + 1 = 4
    assert (len(agent.messages)) == 4
    # Half of the messages were summarized and removed: int(5/2) = 2
    # However, one of the messages that was summarized was the previous summary message,
    # so we dont count this toward the total:
    # 4 (Previously removed messages) + 2 (removed messages) - 1 (Previous summary message) = 5
    assert manager.removed_message_count == 5


@patch("strands.agent.conversation_manager.summarizing_conversation_manager.ToolRegistry")
def test_summarizing_conversation_manager_generate_summary_with_noop_tool_agent_path(mock_registry_cls, make_manager):
    """Test noop tool registration when using the agent path (summarization_agent provided)."""
    mock_registry = mock_registry_cls.return_value

    summary_agent = create_mock_agent()
    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=2,
        summarization_agent=summary_agent,
    )

    messages = [{"role": "user", "content": [{"text": "test"}]}]
    parent_agent = create_mock_agent()

    original_tool_registry = summary_agent.tool_registry
    manager._generate_summary(messages, parent_agent)

    assert original_tool_registry == summary_agent.tool_registry
    mock_registry.register_tool.assert_called_once()


@patch("strands.agent.conversation_manager.summarizing_conversation_manager.ToolRegistry")
def test_summarizing_conversation_manager_generate_summary_with_tools_agent_path(mock_registry_cls, make_manager):
    """Test no noop tool registration when summarization_agent has tools."""
    mock_registry = mock_registry_cls.return_value

    summary_agent = create_mock_agent()
    summary_agent.tool_names = ["test_tool"]
    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=2,
        summarization_agent=summary_agent,
    )

    messages = [{"role": "user", "content": [{"text": "test"}]}]
    parent_agent = create_mock_agent()

    manager._generate_summary(messages, parent_agent)

    mock_registry.register_tool.assert_not_called()


def test_generate_summary_disables_structured_output_on_summarization_agent(make_manager):
    """Test that structured output is disabled during summarization to avoid toolUse in user messages.

    When a summarization agent has structured_output_model configured, the response contains toolUse blocks.
    Since the summary is converted to a user message, toolUse blocks would violate the model API constraint
    that user messages cannot contain tool uses. The fix disables structured output during summarization.
    """
    summary_agent = create_mock_agent()
    structured_output_model = Mock()
    summary_agent._default_structured_output_model = structured_output_model

    original_call = summary_agent.__class__.__call__
    observed_values = []

    def tracking_call(self, prompt):
        observed_values.append(self._default_structured_output_model)
        return original_call(self, prompt)

    messages: Messages = [
        {"role": "user", "content": [{"text": "Hello"}]},
        {"role": "assistant", "content": [{"text": "Hi there"}]},
    ]

    manager = make_manager(summarization_agent=summary_agent)

    with patch.object(MockAgent, "__call__", tracking_call):
        manager._generate_summary(messages, create_mock_agent())

    assert observed_values == [None], "structured output should be disabled during summarization"
    assert summary_agent._default_structured_output_model is structured_output_model, "should be restored after"


# ==============================================================================
# Compression Threshold Tests
# ==============================================================================


def _make_summarizing_threshold_agent(messages, summary_response="Summary of conversation", context_window_limit=1000):
    agent = MagicMock()
    agent.messages = messages
    agent.model = MagicMock()
    agent.model.context_window_limit = context_window_limit
    agent.model.estimate_utilization = lambda input_tokens: Model.estimate_utilization(agent.model, input_tokens)
    agent.model.stream = Mock(side_effect=lambda *a, **kw: _mock_model_stream(summary_response))
    agent.aux_model = agent.model
    return agent


def test_proactive_compression_summarizes_when_exceeded(make_manager):
    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=2,
        proactive_compression={"compression_threshold": 0.7},
    )
    messages = [
        {"role": "user", "content": [{"text": f"Message {i}"}]}
        if i % 2 == 0
        else {"role": "assistant", "content": [{"text": f"Response {i}"}]}
        for i in range(20)
    ]
    agent = _make_summarizing_threshold_agent(messages, context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    event = BeforeModelCallEvent(agent=agent, invocation_state={}, projected_input_tokens=800)
    asyncio.run(registry.invoke_callbacks_async(event))

    # 20 * 0.5 = 10 summarized → 1 summary + 10 remaining = 11
    assert len(agent.messages) == 11
    assert agent.messages[0]["role"] == "user"


def test_proactive_compression_no_summarize_when_below(make_manager):
    manager = make_manager(proactive_compression={"compression_threshold": 0.7})
    messages = [
        {"role": "user", "content": [{"text": f"Message {i}"}]}
        if i % 2 == 0
        else {"role": "assistant", "content": [{"text": f"Response {i}"}]}
        for i in range(20)
    ]
    agent = _make_summarizing_threshold_agent(messages, context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    event = BeforeModelCallEvent(agent=agent, invocation_state={}, projected_input_tokens=500)
    asyncio.run(registry.invoke_callbacks_async(event))

    assert len(agent.messages) == 20


def test_proactive_compression_swallows_errors(make_manager):
    manager = make_manager(
        summary_ratio=0.5,
        preserve_recent_messages=2,
        proactive_compression={"compression_threshold": 0.7},
    )
    messages = [
        {"role": "user", "content": [{"text": f"Message {i}"}]}
        if i % 2 == 0
        else {"role": "assistant", "content": [{"text": f"Response {i}"}]}
        for i in range(20)
    ]
    agent = MagicMock()
    agent.messages = messages
    agent.model = MagicMock()
    agent.model.context_window_limit = 1000
    agent.model.estimate_utilization = lambda input_tokens: Model.estimate_utilization(agent.model, input_tokens)
    agent.model.stream = Mock(side_effect=lambda *a, **kw: _mock_model_stream_error(RuntimeError("model failed")))
    agent.aux_model = agent.model

    registry = HookRegistry()
    manager.register_hooks(registry)

    event = BeforeModelCallEvent(agent=agent, invocation_state={}, projected_input_tokens=800)
    # Should not throw — proactive compression is best-effort
    asyncio.run(registry.invoke_callbacks_async(event))
    assert len(agent.messages) == 20


# ============================================================= test_conversation_manager.py (proactive compression)


class _CountingManager(SemanticSummarizingConversationManager):
    """This manager with ``reduce_context`` counting its calls (Strands' ``_MinimalManager``)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.reduce_context_call_count = 0

    def reduce_context(self, agent, e=None, **kwargs):
        self.reduce_context_call_count += 1
        if agent.messages:
            agent.messages.pop(0)


def _make_mock_agent(messages=None, context_window_limit=1000):
    agent = MagicMock()
    agent.messages = messages if messages is not None else []
    agent.model = MagicMock()
    agent.model.context_window_limit = context_window_limit
    agent.model.estimate_utilization = lambda input_tokens: Model.estimate_utilization(agent.model, input_tokens)
    return agent


def _make_threshold_event(agent, projected_input_tokens=None):
    return BeforeModelCallEvent(
        agent=agent,
        invocation_state={},
        projected_input_tokens=projected_input_tokens,
    )


def test_proactive_compression_rejects_zero(make_manager):
    with pytest.raises(ValueError, match="compression_threshold must be between 0"):
        make_manager(_CountingManager, proactive_compression={"compression_threshold": 0})


def test_proactive_compression_rejects_negative(make_manager):
    with pytest.raises(ValueError, match="compression_threshold must be between 0"):
        make_manager(_CountingManager, proactive_compression={"compression_threshold": -0.5})


def test_proactive_compression_rejects_greater_than_one(make_manager):
    with pytest.raises(ValueError, match="compression_threshold must be between 0"):
        make_manager(_CountingManager, proactive_compression={"compression_threshold": 1.5})


def test_proactive_compression_accepts_exactly_one(make_manager):
    manager = make_manager(_CountingManager, proactive_compression={"compression_threshold": 1.0})
    assert manager._compression_threshold == 1.0


def test_proactive_compression_none_by_default(make_manager):
    manager = make_manager(_CountingManager)
    assert manager._compression_threshold is None


def test_proactive_compression_true_uses_default_threshold(make_manager):
    """proactive_compression=True uses default threshold of 0.7."""
    manager = make_manager(_CountingManager, proactive_compression=True)
    assert manager._compression_threshold == 0.7


def test_proactive_compression_false_disables(make_manager):
    """proactive_compression=False means no compression."""
    manager = make_manager(_CountingManager, proactive_compression=False)
    assert manager._compression_threshold is None


def test_proactive_compression_always_registers_hook(make_manager):
    """Hook is always registered regardless of proactive_compression setting."""
    manager = make_manager(_CountingManager)
    registry = HookRegistry()
    manager.register_hooks(registry)
    # Always registers the hook
    assert registry.has_callbacks()


def test_proactive_compression_hook_is_noop_when_not_configured(make_manager):
    """BeforeModelCallEvent handler is a no-op when proactive_compression is not set."""
    manager = make_manager(_CountingManager)
    agent = _make_mock_agent(context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    event = _make_threshold_event(agent, projected_input_tokens=900)
    asyncio.run(registry.invoke_callbacks_async(event))

    assert manager.reduce_context_call_count == 0


def test_proactive_compression_calls_reduce_context_when_exceeded(make_manager):
    manager = make_manager(_CountingManager, proactive_compression={"compression_threshold": 0.7})
    agent = _make_mock_agent(messages=[{"role": "user", "content": [{"text": "msg"}]}], context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    event = _make_threshold_event(agent, projected_input_tokens=800)
    asyncio.run(registry.invoke_callbacks_async(event))

    assert manager.reduce_context_call_count == 1


def test_proactive_compression_no_call_when_below(make_manager):
    manager = make_manager(_CountingManager, proactive_compression={"compression_threshold": 0.7})
    agent = _make_mock_agent(context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    event = _make_threshold_event(agent, projected_input_tokens=500)
    asyncio.run(registry.invoke_callbacks_async(event))

    assert manager.reduce_context_call_count == 0


def test_proactive_compression_no_call_when_projected_tokens_none(make_manager):
    manager = make_manager(_CountingManager, proactive_compression=True)
    agent = _make_mock_agent(context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    event = _make_threshold_event(agent, projected_input_tokens=None)
    asyncio.run(registry.invoke_callbacks_async(event))

    assert manager.reduce_context_call_count == 0


def test_proactive_compression_uses_default_when_context_window_limit_not_set(make_manager):
    manager = make_manager(_CountingManager, proactive_compression={"compression_threshold": 0.7})
    agent = _make_mock_agent(context_window_limit=None)
    registry = HookRegistry()
    manager.register_hooks(registry)

    # projected_input_tokens=150_000 is 75% of the 200k default, exceeding 0.7 threshold
    event = _make_threshold_event(agent, projected_input_tokens=150_000)
    with pytest.warns(UserWarning, match="using default"):
        asyncio.run(registry.invoke_callbacks_async(event))

    assert manager.reduce_context_call_count == 1


def test_proactive_compression_exception_swallowed(make_manager):
    """Exceptions in reduce_context during proactive compression should not propagate."""

    class _FailingManager(SemanticSummarizingConversationManager):
        def reduce_context(self, agent, e=None, **kwargs):
            raise RuntimeError("boom")

    manager = make_manager(_FailingManager, proactive_compression={"compression_threshold": 0.7})
    agent = _make_mock_agent(context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    event = _make_threshold_event(agent, projected_input_tokens=800)
    asyncio.run(registry.invoke_callbacks_async(event))


def test_proactive_compression_true_default_threshold_behavior(make_manager):
    """proactive_compression=True uses 0.7 — triggered at 0.7+ but not below."""
    manager = make_manager(_CountingManager, proactive_compression=True)
    agent = _make_mock_agent(messages=[{"role": "user", "content": [{"text": "msg"}]}], context_window_limit=1000)
    registry = HookRegistry()
    manager.register_hooks(registry)

    # 650/1000 = 0.65 < 0.7 — should NOT trigger
    event = _make_threshold_event(agent, projected_input_tokens=650)
    asyncio.run(registry.invoke_callbacks_async(event))
    assert manager.reduce_context_call_count == 0

    # 800/1000 = 0.8 >= 0.7 — should trigger
    event2 = _make_threshold_event(agent, projected_input_tokens=800)
    asyncio.run(registry.invoke_callbacks_async(event2))
    assert manager.reduce_context_call_count == 1


# ================================================================== test_tracking_id_history_invariant.py


def _assert_all_have_tracking_id(messages, context: str) -> None:
    for index, message in enumerate(messages):
        tracking_id = message.get("tracking_id")
        assert isinstance(tracking_id, str) and tracking_id, (
            f"{context}: message[{index}] (role={message.get('role')}) has no tracking_id: {message}"
        )
    ids = [message["tracking_id"] for message in messages]
    assert len(set(ids)) == len(ids), f"{context}: tracking_ids are not unique: {ids}"


class _OverflowOnceModel(ScriptedModel):
    """Overflows exactly once, on the first stream call after ``arm()`` is called.

    Drives the reactive summarization path deterministically without hand-counting model calls:
    the test seeds history, calls ``arm()``, then makes one more turn — the next model call raises
    ``ContextWindowOverflowException``, the agent runs ``reduce_context`` (which calls the model
    again to generate a summary), then retries.
    """

    def __init__(self, reply_text: str = "Reply"):
        super().__init__(lambda messages, system_prompt, is_summary: reply_text)
        self._armed = False

    def arm(self) -> None:
        """Arm a single overflow on the next stream call."""
        self._armed = True

    async def stream(self, *args, **kwargs):
        if self._armed:
            self._armed = False
            raise ContextWindowOverflowException("simulated context overflow")
        async for event in super().stream(*args, **kwargs):
            yield event


@pytest.mark.anyio
async def test_no_idless_messages_after_summarization(make_manager):
    model = _OverflowOnceModel("Reply")
    manager = make_manager(summary_ratio=0.5, preserve_recent_messages=2)
    agent = Agent(model=model, conversation_manager=manager)

    for index in range(6):
        await agent.invoke_async(f"Message {index}")

    model.arm()  # next model call overflows → reduce_context summarizes → retry succeeds
    await agent.invoke_async("Trigger overflow")

    # Robust signal that summarization actually ran: the manager holds the generated summary, and
    # that summary is present in history — rather than inferring reduction from a message count.
    assert manager._summary_message is not None, "expected summarization to run"
    assert manager._summary_message in agent.messages, "expected the summary to be spliced into history"
    _assert_all_have_tracking_id(agent.messages, "after summarization")


@pytest.mark.anyio
async def test_no_idless_messages_after_combined_multi_turn_flow(make_manager):
    # A longer flow: several turns plus a summarization reduction in one conversation.
    model = _OverflowOnceModel("Reply")
    manager = make_manager(summary_ratio=0.4, preserve_recent_messages=2)
    agent = Agent(model=model, conversation_manager=manager)

    for index in range(8):
        await agent.invoke_async(f"Turn {index}")

    model.arm()
    await agent.invoke_async("Final turn that overflows")

    assert manager._summary_message is not None, "expected summarization to run in the combined flow"
    _assert_all_have_tracking_id(agent.messages, "after combined multi-turn flow")


# ================================================================== session/test_repository_session_manager.py


@pytest.fixture
def existing_session_manager(tmp_path):
    """Create a session manager with a pre-existing session in the repository."""
    # Create session first so the manager sees it as existing
    FileSessionManager(session_id="test-session", storage_dir=str(tmp_path))
    return FileSessionManager(session_id="test-session", storage_dir=str(tmp_path))


def test_initialize_restores_existing_agent_with_summarizing_conversation_manager(
    existing_session_manager, make_manager
):
    """Test that initializing an existing agent restores its state."""
    conversation_manager = make_manager()
    conversation_manager.removed_message_count = 1
    conversation_manager._summary_message = {"role": "assistant", "content": [{"text": "summary"}]}

    # Create agent in repository first
    session_agent = SessionAgent(
        agent_id="existing-agent",
        state={"key": "value"},
        conversation_manager_state=conversation_manager.get_state(),
    )
    existing_session_manager.session_repository.create_agent("test-session", session_agent)

    # Create some messages
    message = SessionMessage(
        message={
            "role": "user",
            "content": [ContentBlock(text="Hello")],
        },
        message_id=0,
    )
    # Create two messages as one will be removed by the conversation manager
    existing_session_manager.session_repository.create_message("test-session", "existing-agent", message)
    message.message_id = 1
    existing_session_manager.session_repository.create_message("test-session", "existing-agent", message)

    # Initialize agent
    agent = Agent(agent_id="existing-agent", conversation_manager=make_manager())
    existing_session_manager.initialize(agent)

    # Verify agent state restored
    assert agent.state.get("key") == "value"
    # The session message plus the summary message
    assert len(agent.messages) == 2
    assert agent.messages[1]["role"] == "user"
    assert agent.messages[1]["content"][0]["text"] == "Hello"
    assert agent.conversation_manager.removed_message_count == 1
