"""Moved to :mod:`tests.support.scripted_model`; this name stays until every test imports the new path."""

from tests.support.scripted_model import *  # noqa: F403
from tests.support.scripted_model import ToolCall, default_responder, last_user_text  # noqa: F401
