"""Qt user interface of attnviz (the only package that imports Qt)."""
