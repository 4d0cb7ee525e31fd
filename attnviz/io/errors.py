"""Exceptions raised by :mod:`attnviz.io`.

Every refusal is a ``ValueError`` subclass whose ``str()`` is a single line of bounded length,
with control characters escaped (``attnviz.text.tr.one_line``), of the form
``"<file name>: <what is wrong>"``, so the UI can show it verbatim in a status bar or dialog and a
script can catch one type. Internal errors from numpy, zipfile, torch or json are never let out
as themselves: they are re-raised as one of these with the original chained as ``__cause__``.

The reasons are marked for translation (``attnviz.text.tr``, context "FileErrors"): ``str()`` is the
English, and the UI shows ``attnviz.i18n.error_text(exc)`` (or ``tr_text(exc.reason)``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, message, one_line

__all__ = ["AttnvizFileError", "CaptureFileError", "SessionFileError", "TensorFileError"]

# The whole line of every refusal. Left unmarked (empty context): "name: reason" reads the same
# in every language shipped, and only the reason needs a translation.
_LINE = "{file}: {reason}"


class AttnvizFileError(ValueError):
    """A file attnviz refuses to read or cannot write.

    ``path`` is the full path involved and ``reason`` the message without the file name, which is
    handy when the caller already shows the path elsewhere. ``reason`` may be (and from this
    package is) an ``attnviz.text.tr.Message``: it is kept one, so the UI can translate it.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = Path(path)
        # Multi-line messages (torch's are paragraphs) would break one-line status displays;
        # one_line squeezes and bounds a Message's values and keeps it translatable.
        self.reason = one_line(reason)
        # The argument is a Message too, so exception_message / error_text translate the whole
        # line; the file name is cleaned and bounded like any value (a newline, an escape sequence).
        super().__init__(one_line(Message(_LINE, file=str(self.path.name or self.path), reason=self.reason)))


class TensorFileError(AttnvizFileError):
    """A tensor file (.npy, .npz, .pt/.pth, .safetensors) that is unsafe, damaged or too large."""


class CaptureFileError(AttnvizFileError):
    """A capture file (``.attnviz-capture``) that is not a valid capture, or could not be written."""


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
        raise error(
            path, message(QT_TRANSLATE_NOOP("FileErrors", "cannot be read ({error})"), error=exc.strerror or str(exc))
        ) from exc
    except MemoryError as exc:
        raise error(path, QT_TRANSLATE_NOOP("FileErrors", "is too large to load into memory")) from exc
    except Exception as exc:
        raise error(
            path, message(QT_TRANSLATE_NOOP("FileErrors", "is damaged ({error})"), error=first_line(exc))
        ) from exc


def cannot_write(exc: OSError) -> Message:
    """The reason for a failed write: "cannot be written (<the system's words>)"."""
    return message(QT_TRANSLATE_NOOP("FileErrors", "cannot be written ({error})"), error=exc.strerror or str(exc))


def first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:160] if lines else type(exc).__name__
