"""attnviz: see and debug attention.

The package is split so that the heavy parts load only when needed:
``attnviz.engine`` is pure PyTorch (no Qt), ``attnviz.ui`` is Qt only, ``attnviz.io`` reads and
writes files. Importing ``attnviz`` itself imports neither torch nor Qt.
"""

__version__ = "0.1.0"
