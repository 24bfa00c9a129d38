"""The report: ``benchmarks.md`` and its figures, written from a run's results (``benchmarks.json``).

Modules: ``sections`` (one builder per section: Markdown and figures as data), ``figures`` (what a builder returns),
``plots`` (the figures, drawn), ``targets`` (the targets by name, and how a figure is judged), ``cells`` (how a value
is written), ``writer`` (writes the report, draws the figures). ``python -m benchmarks.report RESULTS.json
[--output DIR]`` renders a report again from a run's data.
"""
