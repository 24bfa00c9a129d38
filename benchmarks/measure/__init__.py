"""The measurements: one module each, a :class:`~benchmarks.measure.base.Measurement` class in every one the report uses.

Shared: ``base`` (``Measurement`` and the ``Run`` they share), ``sizes`` (full and ``--quick`` sizes), ``tools``
(the precomputed-vector embedder, spreads, percentiles, archives built from the pool), ``pool`` (the pool, embedded
once), ``naive`` (the common pattern the library replaces, measured beside it).

Measurements, in the order a run takes them: ``quality`` (the synthetic retrieval set), ``scale`` (hook latency,
archive cost, eviction, memory), ``restore`` (JSON state against re-embedding), ``locomo`` (LoCoMo recall and search
latency), ``compaction`` (the Strands loop: tokens per turn and facts reached per manager), ``durable`` (a
``FileSessionManager`` turn and a reopen, JSON state against the SQLite file), ``vector_index`` (the index alone,
1k..1M), ``engine`` (``retrieve`` at scale), ``locomo_loop`` (LoCoMo played through an agent: what reaches the
model), ``cold_start`` (fresh processes, the first turn, the reducing turn).

A study beside the report: ``loo`` and ``loo_grids`` (leave-one-conversation-out choice of ranking constants,
``python -m benchmarks.measure.loo``).
"""
