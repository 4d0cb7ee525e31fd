"""Exceptions raised by :mod:`attnviz.io`.

Every refusal is a ``ValueError`` subclass whose ``str()`` is a single line of the form
``"<file name>: <what is wrong>"``, so the UI can show it verbatim in a status bar or dialog and a
script can catch one type. Internal errors from numpy, zipfile, torch or json are never let out
as themselves: they are re-raised as one of these with the original chained as ``__cause__``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["AttnvizFileError", "SessionFileError", "TensorFileError"]


class AttnvizFileError(ValueError):
    """A file attnviz refuses to read or cannot write.

    ``path`` is the full path involved and ``reason`` the message without the file name, which is
    handy when the caller already shows the path elsewhere.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = Path(path)
        # Multi-line messages (torch's are paragraphs) would break one-line status displays.
        self.reason = " ".join(reason.split())
        super().__init__(f"{self.path.name or self.path}: {self.reason}")


class TensorFileError(AttnvizFileError):
    """A tensor file (.npy, .npz, .pt/.pth, .safetensors) that is unsafe, damaged or too large."""


class SessionFileError(AttnvizFileError):
    """An ``.attnviz`` session file that is not a valid session, or could not be written."""
