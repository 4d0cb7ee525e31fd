"""Exceptions raised by :mod:`attnviz.io`.

Every refusal is a ``ValueError`` subclass whose ``str()`` is a single line of the form
``"<file name>: <what is wrong>"``, so the UI can show it verbatim in a status bar or dialog and a
script can catch one type. Internal errors from numpy, zipfile, torch or json are never let out
as themselves: they are re-raised as one of these with the original chained as ``__cause__``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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


@contextlib.contextmanager
def refusals(error: type[AttnvizFileError], path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn anything a reader trips on into ``error(path, one line)``.

    The last line of the promise that a bad file raises this module's errors only: an
    ``OSError`` is "cannot be read", running out of memory is "too large", and any other
    exception means damage no check anticipated.
    """
    try:
        yield
    except AttnvizFileError:
        raise
    except OSError as exc:
        raise error(path, f"cannot be read ({exc.strerror or exc})") from exc
    except MemoryError as exc:
        raise error(path, "is too large to load into memory") from exc
    except Exception as exc:
        raise error(path, f"is damaged ({first_line(exc)})") from exc


def first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:160] if lines else type(exc).__name__
