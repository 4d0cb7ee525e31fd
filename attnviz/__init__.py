"""attnviz: see and debug attention.

The package is split so that the heavy parts load only when needed:
``attnviz.engine`` is pure PyTorch (no Qt), ``attnviz.ui`` is Qt only, ``attnviz.io`` reads and
writes files. Importing ``attnviz`` itself imports neither torch nor Qt: ``attnviz.capture``
(which imports torch), ``attnviz.compare``, ``attnviz.check_invariance`` and
``attnviz.intervene`` are loaded the first time they are used, and ``attnviz.show(...)``, which
opens the window from a script or a notebook (``attnviz.cli.viewer``), when it is called.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "capture", "check_invariance", "compare", "intervene", "save_session", "show"]


def __dir__() -> list[str]:
    # The lazy names too: tab completion and dir(attnviz) find the whole public API.
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    # Only reached while the attribute is missing: ``import attnviz`` stays free of torch and Qt.
    if name == "capture":
        import importlib

        # The package is callable: attnviz.capture(model) records a model's attention calls.
        return importlib.import_module(f"{__name__}.capture")
    if name == "compare":
        import importlib

        # Callable too: attnviz.compare(a, b) compares two runs call by call.
        return importlib.import_module(f"{__name__}.compare")
    if name == "check_invariance":
        from attnviz.compare.invariance import check_invariance

        return check_invariance
    if name == "intervene":
        import importlib

        # Callable too: attnviz.intervene(model, inputs, edits), with attnviz.intervene.AblateHead...
        return importlib.import_module(f"{__name__}.intervene")
    if name == "show":
        from attnviz.cli.viewer import show

        return show
    if name == "save_session":
        from attnviz.cli.sessions import save_session

        return save_session
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
