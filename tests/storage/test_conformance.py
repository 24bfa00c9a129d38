"""Strands' own storage tests, run against ``SemanticStorage`` on the in-process archive and on a SQLite file.

Adapted from strands-agents 1.62.0 (https://github.com/strands-agents/sdk-python, source distribution on PyPI):
``tests/strands/storage/test_in_memory_storage.py``, ``test_local_file_storage.py``, ``test_s3_storage.py``,
``test_storage.py``, ``search/test_keyword.py`` and ``tests/strands/_context_manager/test_stash.py``.
Copyright Amazon.com, Inc. or its affiliates. All Rights Reserved. Licensed under the Apache License, Version 2.0
(http://www.apache.org/licenses/LICENSE-2.0).

Changes: the ``storage`` fixture is a ``SemanticStorage``; ``pytest.mark.asyncio`` is ``pytest.mark.anyio``; tests
that several backends share appear once; the key and prefix rules Strands tests on its normalizing helpers are tested
through the storage's methods; a class name or a backend's own constructor became ours. Not run, as they cannot
apply: the pluggable ``search_strategy`` tests (the search is the engine's), ``InMemoryStorage.clear`` (not part of
the protocol), file-system, sandbox and S3-client tests (no files, no client), the keyword strategy's internals and
its key scoring (a stash key is ``<id>_<n>``: scoring it would match every entry), its 20-result scan (``search``
returns at most ``max_results``), the BM25 strategy (``LocalFileStorage``'s), and the ``Stash`` tests that never touch
the storage.
"""

from __future__ import annotations

import json

import pytest
from strands._context_manager.stash import Stash
from strands.storage import Storage
from strands.storage.storage import _NAMESPACED, _NamespacedStorage, _resolve_namespace
from strands.types.content import ContentBlock, Message
from strands.types.exceptions import StorageError
from strands.types.tools import ToolResult

from strands_semantic_memory.storage import SemanticStorage

pytestmark = pytest.mark.anyio


class TestSemanticStorage:
    """``InMemoryStorage``'s tests (and the ones ``LocalFileStorage`` and ``S3Storage`` share with it)."""

    async def test_write_and_read(self, storage):
        await storage.write("key", b"hello")
        assert await storage.read("key") == b"hello"

    async def test_read_missing_returns_none(self, storage):
        assert await storage.read("nonexistent") is None

    async def test_write_overwrites(self, storage):
        await storage.write("key", b"first")
        await storage.write("key", b"second")
        assert await storage.read("key") == b"second"

    async def test_delete_existing(self, storage):
        await storage.write("key", b"data")
        await storage.delete("key")
        assert await storage.read("key") is None

    async def test_delete_missing_is_noop(self, storage):
        await storage.delete("nonexistent")

    async def test_list_all(self, storage):
        await storage.write("b/2", b"")
        await storage.write("a/1", b"")
        await storage.write("c/3", b"")
        keys = await storage.list("")
        assert keys == ["a/1", "b/2", "c/3"]

    async def test_list_with_prefix(self, storage):
        await storage.write("sessions/a", b"")
        await storage.write("sessions/b", b"")
        await storage.write("offloader/x", b"")
        keys = await storage.list("sessions/")
        assert keys == ["sessions/a", "sessions/b"]

    async def test_list_empty_store(self, storage):
        assert await storage.list("") == []

    async def test_key_normalization(self, storage):
        await storage.write("//foo///bar//", b"data")
        assert await storage.read("/foo/bar/") == b"data"
        assert await storage.read("foo/bar") == b"data"

    async def test_rejects_empty_key(self, storage):
        with pytest.raises(StorageError):
            await storage.write("", b"data")

    async def test_rejects_path_traversal(self, storage):
        with pytest.raises(StorageError):
            await storage.write("../etc/passwd", b"data")

    async def test_namespace(self, storage):
        ns = storage.namespace("scope")
        await ns.write("key", b"value")
        assert await ns.read("key") == b"value"
        assert await storage.read("scope/key") == b"value"

    async def test_namespace_returns_scoped_instance(self, storage):
        scoped = storage.namespace("memory/agent")
        await scoped.write("notes.md", b"hello")

        assert isinstance(scoped, SemanticStorage)
        assert getattr(scoped, "_namespaced", None) is _NAMESPACED
        assert await storage.list("") == ["memory/agent/notes.md"]
        assert await scoped.list("") == ["notes.md"]
        await scoped.delete("notes.md")
        assert await storage.list("") == []

    async def test_namespace_composes(self, storage):
        await storage.namespace("a").namespace("b/").write("k", b"v")
        assert await storage.list("") == ["a/b/k"]

    async def test_namespace_search_is_scoped(self, storage):
        await storage.write("other/memory-agent-notes.md", b"unrelated")
        scoped = storage.namespace("memory/agent")
        await scoped.write("deploy.md", b"blue green deploys")
        await scoped.write("theme.md", b"dark mode")

        results = await scoped.search("memory agent deploy")

        assert [result.key for result in results] == ["deploy.md"]

    async def test_namespace_keeps_subclass_overrides_and_attributes(self, make_storage):
        class TaggedStorage(SemanticStorage):
            def __init__(self, **kwargs) -> None:
                super().__init__(**kwargs)
                self.tag = "custom"

            async def search(self, query: str) -> list:
                from strands.storage.storage import StorageSearchResult

                return [StorageSearchResult(key=f"{self.tag}:{query}", score=1.0)]

        parent = make_storage(TaggedStorage)
        scoped = parent.namespace("memory").namespace("agent")
        await scoped.write("notes.md", b"hello")

        assert isinstance(scoped, TaggedStorage)
        assert [result.key for result in await scoped.search("q")] == ["custom:q"]
        assert await parent.list("") == ["memory/agent/notes.md"]
        assert getattr(parent, "_namespaced", None) is None

    async def test_bytes_are_copied_on_write(self, storage):
        data = bytearray(b"mutable")
        await storage.write("key", data)
        data[0] = 0xFF
        assert await storage.read("key") == b"mutable"

    async def test_search_returns_matching_results(self, storage):
        await storage.write("dark-mode.md", b"enable dark mode in settings")
        await storage.write("deploy.md", b"deploy to production")
        results = await storage.search("dark mode")
        assert len(results) == 1
        assert results[0].key == "dark-mode.md"
        assert results[0].score > 0

    # From LocalFileStorage's tests.

    async def test_write_creates_directories(self, storage):
        await storage.write("a/b/c/file.txt", b"deep")
        assert await storage.read("a/b/c/file.txt") == b"deep"

    async def test_list_nested(self, storage):
        await storage.write("a/1", b"")
        await storage.write("a/2", b"")
        await storage.write("a/sub/3", b"")
        keys = await storage.list("a/")
        assert keys == ["a/1", "a/2", "a/sub/3"]

    async def test_search_returns_matching_nested_results(self, storage):
        await storage.write("notes/dark-mode.md", b"enable dark mode in settings")
        await storage.write("notes/deploy.md", b"deploy to production")
        results = await storage.search("dark mode")
        assert len(results) == 1
        assert results[0].key == "notes/dark-mode.md"
        assert results[0].score > 0

    async def test_binary_round_trip(self, storage):
        binary_data = bytes(range(256))
        await storage.write("binary.bin", binary_data)
        assert await storage.read("binary.bin") == binary_data

    async def test_list_prefix_narrows_directory(self, storage):
        await storage.write("deep/nested/a.txt", b"a")
        await storage.write("deep/nested/b.txt", b"b")
        await storage.write("deep/other/c.txt", b"c")
        keys = await storage.list("deep/nested/")
        assert keys == ["deep/nested/a.txt", "deep/nested/b.txt"]

    async def test_list_prefix_nonexistent_dir(self, storage):
        keys = await storage.list("nonexistent/path/")
        assert keys == []

    async def test_list_prefix_partial_match_dir(self, storage):
        await storage.write("ab/file.txt", b"data")
        keys = await storage.list("abc/")
        assert keys == []

    # From S3Storage's tests (its ``prefix=`` is a namespaced view here).

    async def test_prefix_scopes_keys(self, storage):
        prefixed = storage.namespace("agents/data")
        await prefixed.write("key", b"hello")
        assert await storage.read("agents/data/key") == b"hello"

    async def test_list_strips_prefix(self, storage):
        prefixed = storage.namespace("agents/data")
        await prefixed.write("a", b"")
        await prefixed.write("b", b"")
        keys = await prefixed.list("")
        assert keys == ["a", "b"]


class TestKeyAndPrefixRules:
    """``test_storage.py``'s ``_normalize_key`` and ``_normalize_prefix`` cases, through the storage."""

    @pytest.mark.parametrize(
        ("written", "read"),
        [
            ("foo/bar", "foo/bar"),
            ("foo//bar///baz", "foo/bar/baz"),
            ("/foo/bar", "foo/bar"),
            ("foo/bar/", "foo/bar"),
            ("///foo///bar///", "foo/bar"),
            ("foo/bar.txt", "foo/bar.txt"),
            ("foo/...bar", "foo/...bar"),
        ],
    )
    async def test_keys_are_normalized(self, storage, written, read):
        await storage.write(written, b"x")
        assert await storage.read(read) == b"x"
        assert await storage.list("") == [read]

    @pytest.mark.parametrize(
        ("key", "message"),
        [
            ("", "must not be empty"),
            ("///", "must not be empty"),
            ("foo/../bar", "path segments are not allowed"),
            ("../foo", "path segments are not allowed"),
            ("foo\\bar", "backslashes are not allowed"),
            ("foo\\..\\..\\secret", "backslashes are not allowed"),
        ],
    )
    async def test_invalid_keys_are_refused_by_every_method(self, storage, key, message):
        for call in (storage.write(key, b"x"), storage.read(key), storage.delete(key)):
            with pytest.raises(StorageError, match=message):
                await call
        assert await storage.list("") == []

    async def test_prefixes_are_normalized(self, storage):
        await storage.write("foo/bar/baz", b"x")
        assert await storage.list("foo//bar") == ["foo/bar/baz"]
        assert await storage.list("/foo/bar") == ["foo/bar/baz"]
        assert await storage.list("foo//bar///") == ["foo/bar/baz"]
        assert await storage.list("foo/bar/") == ["foo/bar/baz"]

    @pytest.mark.parametrize(("prefix", "message"), [("foo/../bar", "path segments"), ("foo\\bar/", "backslashes")])
    async def test_invalid_prefixes_are_refused(self, storage, prefix, message):
        with pytest.raises(StorageError, match=message):
            await storage.list(prefix)
        with pytest.raises(StorageError, match=message):
            storage.namespace(prefix)


class TestNamespacedStorage:
    """Strands' generic namespaced view (what its stash and session manager wrap a storage in), over ours."""

    def test_has_namespaced_sentinel(self, storage):
        ns = _NamespacedStorage(storage, "prefix")
        assert ns._namespaced is _NAMESPACED

    async def test_write_read_round_trip(self, storage):
        ns = _NamespacedStorage(storage, "scope")
        await ns.write("key", b"hello")
        assert await ns.read("key") == b"hello"
        assert await storage.read("scope/key") == b"hello"

    async def test_delete(self, storage):
        ns = _NamespacedStorage(storage, "scope")
        await ns.write("key", b"data")
        await ns.delete("key")
        assert await ns.read("key") is None

    async def test_list_strips_prefix(self, storage):
        ns = _NamespacedStorage(storage, "scope")
        await ns.write("a", b"1")
        await ns.write("b", b"2")
        await storage.write("other/x", b"3")
        keys = await ns.list("")
        assert keys == ["a", "b"]

    async def test_composable_nesting(self, storage):
        ns1 = _NamespacedStorage(storage, "a")
        ns2 = ns1.namespace("b")
        await ns2.write("key", b"nested")
        assert await storage.read("a/b/key") == b"nested"
        assert await ns2.read("key") == b"nested"

    async def test_empty_prefix(self, storage):
        ns = _NamespacedStorage(storage, "")
        await ns.write("key", b"data")
        assert await storage.read("key") == b"data"

    async def test_trailing_slash_prefix_does_not_corrupt_keys(self, storage):
        ns = _NamespacedStorage(storage, "sessions/")
        await ns.write("key1", b"hello")
        keys = await ns.list("")
        assert keys == ["key1"]

    async def test_search_scopes_to_prefix(self, storage):
        await storage.write("scope/a.md", b"dark mode toggle")
        await storage.write("scope/b.md", b"light mode")
        await storage.write("other/c.md", b"dark mode elsewhere")

        ns = _NamespacedStorage(storage, "scope")
        results = await ns.search("dark mode")

        keys = [r.key for r in results]
        assert "a.md" in keys
        assert all(not r.key.startswith("scope/") for r in results)
        assert all("other" not in r.key for r in results)


class TestStorageProtocol:
    def test_isinstance_check(self, storage):
        assert isinstance(storage, Storage)
        assert isinstance(storage.namespace("scope"), Storage)


class TestResolveNamespace:
    def test_returns_as_is_when_already_namespaced(self, storage):
        namespaced = storage.namespace("prefix")
        result = _resolve_namespace(namespaced, "another")
        assert result is namespaced

    def test_calls_namespace_method_when_available(self, storage):
        result = _resolve_namespace(storage, "my-prefix")
        assert isinstance(result, SemanticStorage)
        assert getattr(result, "_namespaced", None) is _NAMESPACED

    async def test_scoped_view_writes_under_prefix(self, storage):
        scoped = _resolve_namespace(storage, "data")
        await scoped.write("key.txt", b"hello")
        assert await storage.read("data/key.txt") == b"hello"


class TestSearch:
    """The keyword strategy's tests that describe ``Storage.search`` itself (``search/test_keyword.py``)."""

    async def test_returns_empty_for_empty_query(self, storage):
        await storage.write("key", b"content")
        assert await storage.search("") == []

    async def test_returns_empty_for_whitespace_query(self, storage):
        await storage.write("key", b"content")
        assert await storage.search("   ") == []

    async def test_matches_case_insensitively(self, storage):
        await storage.write("note.md", b"Dark Mode Toggle")
        results = await storage.search("dark mode")
        assert len(results) == 1

    async def test_ranks_by_score_descending(self, storage):
        await storage.write("a.md", b"dark")
        await storage.write("b.md", b"dark mode toggle feature")

        results = await storage.search("dark mode")

        assert len(results) == 2
        assert results[0].score >= results[1].score

    async def test_returns_empty_for_no_matches(self, storage):
        await storage.write("note.md", b"completely unrelated content")
        assert await storage.search("kubernetes deployment") == []

    async def test_ignores_stop_words_in_query(self, storage):
        await storage.write("deploy.md", b"the deploy process runs nightly")
        await storage.write("weather.md", b"what is the weather like")

        results = await storage.search("what is the deploy process")
        assert [result.key for result in results] == ["deploy.md"]

    async def test_returns_empty_for_stop_word_only_query(self, storage):
        await storage.write("note.md", b"what is the plan")
        assert await storage.search("what is the") == []

    async def test_does_not_score_key_file_extension(self, storage):
        await storage.write("release-notes.md", b"ship on fridays")
        assert await storage.search("update AGENTS.md") == []

    async def test_returns_all_matching_entries(self, storage):
        for index in range(8):
            await storage.write(f"note-{index}.md", b"dark mode")
        results = await storage.search("dark mode")
        assert sorted(result.key for result in results) == [f"note-{index}.md" for index in range(8)]


def _entry(text: str) -> bytes:
    return json.dumps({"text": text}).encode("utf-8")


class TestStash:
    """Strands' ``Stash`` tests (the ``ContextManager``'s L1 stash) with a ``SemanticStorage`` under the stash."""

    @pytest.fixture
    def stash(self, storage):
        return Stash(storage, "test-session", "test-agent")

    async def test_round_trips_text_content(self, stash):
        ref = await stash.store("tool-1", 0, _entry("hello world"))
        assert await stash.retrieve(ref) == {"text": "hello world"}

    async def test_round_trips_json_content(self, stash):
        data = json.dumps({"json": {"key": "value"}}).encode("utf-8")
        ref = await stash.store("tool-1", 0, data)
        assert await stash.retrieve(ref) == {"json": {"key": "value"}}

    async def test_returns_none_for_unknown_reference(self, stash):
        assert await stash.retrieve("nonexistent") is None

    async def test_deterministic_keys(self, stash):
        ref1 = await stash.store("tool-1", 0, _entry("test"))
        ref2 = await stash.store("tool-1", 0, _entry("test"))
        assert ref1 == ref2

    async def test_different_keys_for_different_ids_and_indices(self, stash):
        refs = {
            await stash.store("tool-1", 0, _entry("test")),
            await stash.store("tool-2", 0, _entry("test")),
            await stash.store("tool-1", 1, _entry("test")),
        }
        assert len(refs) == 3

    async def test_lists_stored_references(self, stash):
        await stash.store("tool-1", 0, _entry("test"))
        await stash.store("tool-2", 0, _entry("test"))
        assert sorted(await stash.list()) == ["tool-1_0", "tool-2_0"]

    async def test_delete_removes_entry(self, stash):
        ref = await stash.store("tool-1", 0, _entry("test"))
        await stash.delete(ref)
        assert await stash.retrieve(ref) is None

    async def test_stores_tool_result_content(self, stash):
        block = ContentBlock(
            toolResult=ToolResult(toolUseId="tu-1", status="success", content=[{"text": "result data"}])
        )
        await stash.store_message(Message(role="user", content=[block]))
        assert await stash.retrieve("tu-1_0") == {"text": "result data"}

    async def test_stores_text_blocks(self, stash):
        message = Message(role="assistant", content=[ContentBlock(text="hello world")], tracking_id="track-1")
        await stash.store_message(message)
        assert await stash.retrieve("track-1_0") == {"text": "hello world"}

    async def test_stores_image_block_with_bytes(self, stash):
        block = ContentBlock(image={"format": "png", "source": {"bytes": b"\x89PNG\r\n\x1a\n"}})
        await stash.store_message(Message(role="user", content=[block], tracking_id="track-img"))
        result = await stash.retrieve("track-img_0")
        assert result is not None
        assert "image" in result

    async def test_skips_tool_use_blocks(self, stash):
        block = ContentBlock(toolUse={"toolUseId": "tu-1", "name": "test", "input": {}})
        await stash.store_message(Message(role="assistant", content=[block], tracking_id="track-1"))
        assert await stash.list() == []

    async def test_skips_tool_results_in_skip_set(self, stash):
        block = ContentBlock(
            toolResult=ToolResult(toolUseId="tu-skip", status="success", content=[{"text": "should skip"}])
        )
        await stash.store_message(Message(role="user", content=[block]), skip_tool_use_ids=frozenset({"tu-skip"}))
        assert await stash.retrieve("tu-skip_0") is None

    async def test_keep_existing_leaves_stored_entries_untouched(self, stash):
        await stash.load_snapshot({"tu-1_0": {"text": "original result"}, "track-1_1": {"text": "original text"}})
        message = Message(
            role="user",
            content=[
                ContentBlock(
                    toolResult=ToolResult(
                        toolUseId="tu-1",
                        status="success",
                        content=[{"text": "preview result"}, {"text": "second result"}],
                    )
                ),
                ContentBlock(text="preview text"),
            ],
            tracking_id="track-1",
        )

        await stash.store_message(message, keep_existing=True)

        assert await stash.take_snapshot() == {
            "tu-1_0": {"text": "original result"},
            "tu-1_1": {"text": "second result"},
            "track-1_1": {"text": "original text"},
        }

    async def test_stash_keys_are_namespaced(self, storage):
        stash = Stash(storage, "sess-1", "agent-1")
        await stash.store("tool-1", 0, _entry("test"))
        assert await storage.list("") == ["context/sess-1/scopes/agent/agent-1/tool-1_0"]

    async def test_different_agents_dont_conflict(self, storage):
        stash_a = Stash(storage, "sess-1", "agent-a")
        stash_b = Stash(storage, "sess-1", "agent-b")
        await stash_a.store("tool-1", 0, _entry("test"))
        await stash_b.store("tool-1", 0, _entry("test"))
        assert await stash_a.list() == ["tool-1_0"]
        assert await stash_b.list() == ["tool-1_0"]

    async def test_take_snapshot(self, stash):
        assert await stash.take_snapshot() == {}
        await stash.store("tool-1", 0, _entry("hello"))
        await stash.store("tool-2", 0, _entry("world"))
        assert await stash.take_snapshot() == {"tool-1_0": {"text": "hello"}, "tool-2_0": {"text": "world"}}

    async def test_load_snapshot_round_trip(self, stash, make_storage):
        await stash.store("tool-1", 0, _entry("original"))
        snapshot = await stash.take_snapshot()

        new_stash = Stash(make_storage(), "test-session", "test-agent")
        await new_stash.load_snapshot(snapshot)
        assert await new_stash.retrieve("tool-1_0") == {"text": "original"}

    async def test_clear(self, stash):
        await stash.clear()
        await stash.store("tool-1", 0, _entry("a"))
        await stash.store("tool-2", 0, _entry("b"))
        await stash.clear()
        assert await stash.list() == []

    async def test_clear_session_deletes_entries_across_agents_only_in_the_session(self, storage):
        stash_a = Stash(storage, "s1", "agent-a")
        stash_b = Stash(storage, "s1", "agent-b")
        stash_s10 = Stash(storage, "s10", "agent-a")
        for stash, text in ((stash_a, "a"), (stash_b, "b"), (stash_s10, "s10")):
            await stash.store("tool-1", 0, _entry(text))

        await stash_a.clear_session()

        assert await stash_a.list() == []
        assert await stash_b.list() == []
        assert await stash_s10.list() == ["tool-1_0"]

    async def test_view_is_exact_root(self, storage):
        stash = Stash(storage.namespace("tenants/t1/research"), "sess-1", "agent-a", custom_stash_namespace=True)
        await stash.store("tool-1", 0, _entry("test"))
        assert await storage.list("") == ["tenants/t1/research/tool-1_0"]

    async def test_view_uses_per_agent_root_unless_allowed(self, storage):
        stash = Stash(storage.namespace("tenant"), "sess-1", "agent-a")
        await stash.store("tool-1", 0, _entry("test"))
        assert await storage.list("") == ["tenant/context/sess-1/scopes/agent/agent-a/tool-1_0"]

    async def test_agents_in_different_sessions_sharing_a_view_read_each_others_entries(self, storage):
        stash_a = Stash(storage.namespace("team"), "sess-1", "agent-a", custom_stash_namespace=True)
        stash_b = Stash(storage.namespace("team"), "sess-2", "agent-b", custom_stash_namespace=True)
        await stash_a.store("tool-1", 0, _entry("from a"))
        assert await stash_b.retrieve("tool-1_0") == {"text": "from a"}

    async def test_clear_session_keeps_shared_view(self, storage):
        stash = Stash(storage.namespace("team"), "sess-1", "agent-a", custom_stash_namespace=True)
        await stash.store("tool-1", 0, _entry("shared"))
        await stash.clear_session()
        assert await storage.list("") == ["team/tool-1_0"]
