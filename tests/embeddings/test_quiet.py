"""Loading the real model prints nothing, and the caller's progress-bar setting survives (issue 17.10)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from transformers.utils import logging as transformers_logging

from strands_semantic_memory.embeddings._local import bundled_model_path, load_sentence_transformer_uncached
from strands_semantic_memory.embeddings._quiet import quiet_model_loading


@pytest.fixture
def bars_setting() -> Iterator[None]:
    """Put transformers' global progress-bar switch back however a test leaves it."""
    before = transformers_logging.is_progress_bar_enabled()
    yield
    if before:
        transformers_logging.enable_progress_bar()
    else:
        transformers_logging.disable_progress_bar()


def _bundled() -> str:
    path = bundled_model_path()
    assert path is not None
    return str(path)


def test_a_plain_load_draws_the_bar_so_the_next_test_means_something(capfd, bars_setting):
    from sentence_transformers import SentenceTransformer

    transformers_logging.enable_progress_bar()
    capfd.readouterr()
    SentenceTransformer(_bundled(), device="cpu")
    if "Loading weights" not in capfd.readouterr().err:
        pytest.skip("this transformers version draws no 'Loading weights' bar")


@pytest.mark.parametrize("enabled", [True, False])
def test_loading_the_real_model_prints_nothing_and_keeps_the_callers_setting(capfd, bars_setting, enabled):
    if enabled:
        transformers_logging.enable_progress_bar()
    else:
        transformers_logging.disable_progress_bar()
    capfd.readouterr()
    model = load_sentence_transformer_uncached(_bundled(), "cpu")
    captured = capfd.readouterr()
    assert model.encode(["hello"]).shape == (1, 384)
    assert "Loading weights" not in captured.err
    assert captured.err == "" and captured.out == ""
    assert transformers_logging.is_progress_bar_enabled() is enabled


def test_concurrent_and_nested_quiet_blocks_restore_the_setting_once_the_last_exits(bars_setting):
    transformers_logging.enable_progress_bar()
    seen_inside: list[bool] = []
    start = threading.Barrier(6)

    def load(delay: float) -> None:
        start.wait()
        with quiet_model_loading():
            with quiet_model_loading():
                time.sleep(delay)
                seen_inside.append(transformers_logging.is_progress_bar_enabled())
            time.sleep(delay)
            seen_inside.append(transformers_logging.is_progress_bar_enabled())

    threads = [threading.Thread(target=load, args=(0.01 * i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen_inside == [False] * 12
    assert transformers_logging.is_progress_bar_enabled() is True


def test_an_error_inside_the_block_still_restores_the_setting(bars_setting):
    transformers_logging.enable_progress_bar()
    with pytest.raises(RuntimeError, match="boom"), quiet_model_loading():
        assert transformers_logging.is_progress_bar_enabled() is False
        raise RuntimeError("boom")
    assert transformers_logging.is_progress_bar_enabled() is True
