"""The benchmark suite: ``python -m benchmarks.run`` measures the library as users run it and writes
``docs/benchmarks.md`` (with its plots and ``docs/benchmarks.json``). Each section is a module of this package
listed in ``benchmarks.sections``; ``benchmarks.common`` holds what they share."""
