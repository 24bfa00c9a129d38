"""Where the file is: a missing folder is refused (never created), a path that is not one is named, and a read-only
file or folder is called read-only (issue 41's quiet surprises)."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from strands_semantic_memory import SemanticMemory
from strands_semantic_memory.archives.sqlite import SqliteArchive
from strands_semantic_memory.errors import ArchiveError, ConfigurationError
from tests.support.records import message, record


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` (a file or a folder) made read-only for this process, even for root (``chattr +i``)."""
    if os.geteuid() == 0:  # root writes through permission bits: only an immutable inode stops it
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
            pytest.skip("running as root where chattr +i is not available")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        return
    mode = path.stat().st_mode
    path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        yield
    finally:
        path.chmod(mode)


def test_a_missing_folder_is_refused_and_never_created(tmp_path: Path, embedder):
    path = tmp_path / "mistyped-folder" / "archive.sqlite3"
    with pytest.raises(ConfigurationError, match=r"mistyped-folder.*does not exist"):
        SqliteArchive(path)
    with pytest.raises(ConfigurationError, match=r"mistyped-folder.*does not exist"):
        SemanticMemory(embedder=embedder, archive_path=path)
    assert not path.parent.exists(), "no folder was created, so no empty archive stands in for the real one"


@pytest.mark.parametrize("bad", [123, 4.5, b"archive.sqlite3", [], ""])
def test_an_archive_path_that_is_not_a_path_is_named(embedder, bad):
    with pytest.raises(ConfigurationError, match="archive_path"):
        SemanticMemory(embedder=embedder, archive_path=bad)
    with pytest.raises(ConfigurationError, match="path"):
        SqliteArchive(bad)


def test_a_folder_given_as_the_file_is_refused(tmp_path: Path):
    with pytest.raises(ConfigurationError, match="is a folder"):
        SqliteArchive(tmp_path)


def test_a_read_only_file_is_called_read_only(tmp_path: Path):
    path = tmp_path / "archive.sqlite3"
    archive = SqliteArchive(path)
    archive.add([record(message("kept"))])
    archive.close()
    before = path.read_bytes()
    with read_only(path), pytest.raises(ArchiveError, match=rf"'{path}' is read-only"):
        SqliteArchive(path)
    assert path.read_bytes() == before


def test_a_read_only_folder_is_called_read_only(tmp_path: Path):
    folder = tmp_path / "locked"
    folder.mkdir()
    with read_only(folder), pytest.raises(ArchiveError, match=rf"folder '{folder}'.*read-only"):
        SqliteArchive(folder / "archive.sqlite3")
    assert not (folder / "archive.sqlite3").exists()
    archive = SqliteArchive(folder / "archive.sqlite3")  # writable again: it opens
    archive.add([record(message("now it works"))])
    archive.close()
    with read_only(folder), pytest.raises(ArchiveError, match=r"read-only: its journal"):
        SqliteArchive(folder / "archive.sqlite3")  # the file is writable, but its -wal cannot be created
