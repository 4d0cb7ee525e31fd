"""File names as the window shows them (its title, status bar, menus and dialogs).

A file's name is data from outside: it may hold line breaks, escape sequences, bidirectional
controls (``\\u202e`` shows "evil\\u202etxt.attnviz" as "evilzivnta.txt") or bytes that are
not text. Shown raw, it breaks the one-line title and status bar or misleads; here control
characters are escaped as the readers' refusals escape them (``attnviz.text.tr.clean``) and a long
name keeps its start and its end. Qt-free, so it is tested without a window.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnviz.text.tr import clean

__all__ = ["MAX_SHOWN_NAME_CHARS", "display_name", "display_path"]

#: A title or status bar shows this much of a name; the middle of a longer one is left out.
MAX_SHOWN_NAME_CHARS = 80


def display_name(path: str | os.PathLike[str]) -> str:
    """The last part of ``path`` (the whole of it when it has none), fit for one line."""
    name = Path(path).name or str(path)
    return _bounded(clean(name), MAX_SHOWN_NAME_CHARS)


def display_path(path: str | os.PathLike[str]) -> str:
    """The whole of ``path`` fit for one line (a status message saying where a file was written)."""
    return _bounded(clean(str(path)), 4 * MAX_SHOWN_NAME_CHARS)


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    keep = (limit - 1) // 2
    return f"{text[:keep]}\u2026{text[len(text) - keep :]}"
