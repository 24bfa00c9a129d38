"""Shared test helpers: real-model embedder wrappers, deterministic conversations, the scripted chat model and
store factories. Test modules import from here, never from each other."""
