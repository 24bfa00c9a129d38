"""The benchmark suite behind ``docs/benchmarks.md``: ``python -m benchmarks.run`` (``--help``; ``--quick`` for tiny sizes).

Layout, lowest first (a folder imports only from those before it in this list; ``tests/benchmarks/test_layering.py``
checks it):

- ``data/``: what is measured on. ``conversations`` (word lists, text messages, filler turns; the tests build
  their conversations from them too), ``synthetic`` (the synthetic retrieval set), ``locomo`` (LoCoMo read as
  archived turns and as exchanges), ``devset/`` (the second development set, ``python -m benchmarks.data.devset``).
- ``results.py``: the shapes of every result, plain JSON data (what a run writes as ``benchmarks.json``).
- ``measure/``: one module per measurement, each with a ``Measurement`` class (``base``: the class and the ``Run``
  the measurements share; ``sizes``: full and ``--quick`` sizes). Some run alone too:
  ``python -m benchmarks.measure.locomo``, ``.locomo_loop``, ``.cold_start``, ``.compaction``, and the
  leave-one-out study ``.loo``.
- ``report/``: ``sections/`` (one builder per section: Markdown and figures as data), ``targets`` (by name),
  ``plots`` (the figures, drawn), ``writer`` (writes the report and draws its figures);
  ``python -m benchmarks.report RESULTS.json`` renders a report again from a run's data.
- ``sections.py``: the table of sections: each section's measurements, builder and figures, in the report's order,
  which is the order a run measures in.
- ``run.py``: the command line: parse, pick the measurements, run them, write the data and the report.

The test doubles the benchmarks drive agents with ship in the package: ``strands_semantic_memory.testing``
(``ScriptedModel``, ``DiskCachedEmbedder``). The benchmarks import only the package's public names.
"""
