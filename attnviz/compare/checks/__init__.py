"""The invariance checks, one module each (``attnviz.check_invariance`` composes them in
``attnviz.compare.invariance``): ``base`` (the ``Subject``, the ``InvarianceCheck`` interface, one
run under capture, where two runs part), ``determinism``, ``padding``, ``kv_cache``,
``implementations``, ``dtype``."""
