"""One builder per section of the report: ``build(results)`` returns its Markdown lines and its figures as data.

In the report's order: ``conditions`` (title, how the run went), ``target_table``, ``quality``, ``scale``,
``restore``, ``locomo``, ``compaction`` (tokens per turn in the Strands loop), ``large`` (the durable archive and
1k..1M), ``locomo_loop``, ``cold_start``. ``benchmarks.sections`` pairs each with its measurements.
"""
