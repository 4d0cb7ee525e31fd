"""Copy as code, the attnviz script (a call of ``attnviz.engine.attend``): kept importable here.

The generators live in ``attnviz.snippets``; ``make_snippet(state, framework)`` writes plain
PyTorch, TensorFlow, MXNet or JAX code as well.
"""

from __future__ import annotations

from .snippets import DATA_FILE, FRAMEWORKS, Snippet, SnippetError, make_snippet
from .snippets.arrays import MAX_EMBEDDED, MAX_INLINE
from .snippets.attnviz_script import save_snippet_data, snippet_data, snippet_for_state

__all__ = [
    "DATA_FILE",
    "FRAMEWORKS",
    "MAX_EMBEDDED",
    "MAX_INLINE",
    "Snippet",
    "SnippetError",
    "make_snippet",
    "save_snippet_data",
    "snippet_data",
    "snippet_for_state",
]
