"""Naming an archive on the command line: passwords never shown, the options checked (in process, no archive)."""

from __future__ import annotations

import pytest

from strands_semantic_memory.cli._opening import mask_password


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://app:s3cret@db.example:5432/agents", "postgresql://app:***@db.example:5432/agents"),
        ("postgresql://app@db/agents", "postgresql://app@db/agents"),
        ("host=db user=app password=s3cret dbname=agents", "host=db user=app password=*** dbname=agents"),
        ("host=db password = 'with space' dbname=agents", "host=db password = *** dbname=agents"),
    ],
)
def test_a_password_is_masked_wherever_a_dsn_is_shown(dsn, shown):
    assert mask_password(dsn) == shown
