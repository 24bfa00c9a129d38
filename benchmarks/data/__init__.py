"""The benchmarks' data: LoCoMo read from its file, and the sets generated here from a seed.

Modules: ``conversations`` (word lists, text messages and filler turns; the tests use them too), ``synthetic``
(the synthetic retrieval set of the report), ``locomo`` (LoCoMo as archived turns and as exchanges), ``devset``
(the second development set: long assistant-heavy conversations with facts that change).
"""
