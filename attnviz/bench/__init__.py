"""Benchmarks. ``python -m attnviz.bench engine`` and ``python -m attnviz.bench app``."""
