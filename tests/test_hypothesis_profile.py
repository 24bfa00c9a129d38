"""The property tests' settings: reproducible in CI, randomized locally (the profile is chosen in conftest.py)."""

import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import settings

from tests.support import REPO_ROOT


def test_ci_runs_derandomized_and_a_local_run_randomized():
    assert settings.get_profile("ci").derandomize is True
    assert settings.get_profile("local").derandomize is False
    in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    assert settings.default.derandomize is in_ci


@pytest.mark.subprocess
def test_the_ci_variable_selects_the_derandomized_profile():
    script = textwrap.dedent(
        """
        import tests.conftest
        from hypothesis import settings
        print(settings.default.derandomize, settings.default.database)
        """
    )
    for value, expected in [("true", "True None"), ("", "False")]:
        environment = {**os.environ, "CI": value}
        result = subprocess.run(
            [sys.executable, "-c", script], cwd=REPO_ROOT, env=environment, capture_output=True, text=True, check=True
        )
        assert result.stdout.strip().startswith(expected), (value, result.stdout, result.stderr)
