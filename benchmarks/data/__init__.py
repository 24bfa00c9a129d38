"""The benchmarks' data: LoCoMo's development half (``locomo``), generated conversations of other shapes
(``devset``), and prompts nothing in an archive answers (``unrelated``). Both conversation sources give the same
shape (``locomo.Conversation``: dated sessions of turns, questions with the ids of their evidence turns), so every
section and the leave-one-out helper can run on either."""

__all__ = ["devset", "locomo", "unrelated"]
