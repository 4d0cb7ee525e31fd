"""attnviz: see and debug attention.

The package is split so that the heavy parts load only when needed:
``attnviz.engine`` is pure PyTorch (no Qt), ``attnviz.ui`` is Qt only, ``attnviz.io`` reads and
writes files. Importing ``attnviz`` itself imports neither torch nor Qt; ``attnviz.show(...)``
opens the window from a script or a notebook (``attnviz.viewer``).
"""

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "show"]


def __getattr__(name: str) -> Any:
    # Lazy: ``import attnviz`` stays free of torch and Qt; ``attnviz.show`` loads the window.
    if name == "show":
        from attnviz.viewer import show

        return show
    raise AttributeError(f"module 'attnviz' has no attribute {name!r}")
