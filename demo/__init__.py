"""The demo behind main.py: an agent with semantic memory, a local chat model, and checks of what it answers.

Not part of the library."""
