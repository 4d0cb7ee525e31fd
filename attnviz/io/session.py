"""attnviz session files (``.attnviz``): every tensor plus the app settings, in one file.

On-disk format (versions 1 to 4, described in ``SESSION_FORMAT.md`` next to this module):

* the file is a NumPy ``.npz`` archive (a zip of ``.npy`` members), readable with
  ``np.load(path, allow_pickle=False)``; nothing in it needs pickle;
* one member per tensor, ``<name>.npy``, holding a plain numeric or boolean array;
* one member ``__session__.npy``: a 0-d unicode array whose string is JSON::

      {"format": "attnviz-session", "version": 1,
       "settings": {...}, "arrays": ["queries", "keys", ...]}

  ``settings`` is a JSON object owned by the app; ``arrays`` lists every tensor member,
  in order, and nothing else may be in the archive.

Readers must refuse a ``version`` greater than the one they know. Files are written atomically
(temporary file in the same directory, fsync, ``os.replace``), so a crash during a save leaves
the previous session intact.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attnviz.io import _json, _npy
from attnviz.io._atomic import atomic_write
from attnviz.io._limits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_ELEMENTS,
    Budget,
    arrays_to_write,
    regular_file_size,
)
from attnviz.io.errors import SessionFileError, cannot_write, refusals
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "SESSION_MEMBER",
    "SESSION_SUFFIX",
    "Session",
    "SessionFileError",
    "is_session_path",
    "load_session",
    "save_session",
    "state_dir",
]

FORMAT_NAME = "attnviz-session"
FORMAT_VERSION = 4
#: What only a version 4 reader knows: a session without them is written as version 3.
VERSION_4_KEYS = ("ablated_heads", "compared_with")
SESSION_MEMBER = "__session__"
SESSION_SUFFIX = ".attnviz"
STATE_DIR_ENV = "ATTNVIZ_STATE_DIR"
# Settings are small (view options, names: a few hundred characters), a model's tokens are not
# (two lists of 64 x 4,096 tokens take some 5 Mi characters). This bounds the JSON text read
# before parsing, and ``_json.MAX_CONTAINERS`` the objects and lists counted in it, and so what
# parsing makes (the member may be compressed: 16 MB of "{}," deflates to 16 kB). The writer keeps
# to the same bound, so a session attnviz saves (an autosave too) is one it opens again.
MAX_SETTINGS_CHARS = 8 * 1024 * 1024


def is_session_path(path: str | os.PathLike[str]) -> bool:
    """True when the name says ``.attnviz`` session (anything else is read as a tensor file)."""
    return Path(path).suffix.lower() == SESSION_SUFFIX


@dataclass
class Session:
    """Everything needed to restore the app: tensors by name, and JSON-compatible settings."""

    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    #: The run's description (its calls' names, scales and causal flags, the head shown,
    #: tokens, what it is compared with), as JSON; the app always writes one (format version 3,
    #: 4 with ``VERSION_4_KEYS``). Empty: version 1.
    model: dict[str, Any] = field(default_factory=dict)


# --- writing -------------------------------------------------------------------------------


def save_session(path: str | os.PathLike[str], session: Session, *, private: bool = False) -> None:
    """Write ``session`` to ``path`` atomically; an existing file is replaced only on success.

    ``private`` makes a new file readable by its owner only (0o600); a replaced file keeps its mode.

    Raises :class:`SessionFileError` when a name, array or setting cannot be stored faithfully,
    or when writing fails (the previous file, if any, is then untouched).
    """
    file_path = Path(path)
    arrays = arrays_to_write(
        session.arrays, lambda reason: SessionFileError(file_path, reason), reserved=(SESSION_MEMBER,)
    )
    manifest: dict[str, Any] = {
        "format": FORMAT_NAME,
        # Older readers would ignore what they do not know and show a wrong picture: a session
        # says the version its content needs (1: no model; 3: a run; 4: compared with something).
        "version": _version_needed(session.model),
        "settings": _checked_settings(file_path, session.settings),
        "arrays": list(arrays),
    }
    if session.model:
        _check_json(file_path, session.model, "model")
        manifest["model"] = dict(session.model)
    # allow_nan=False: NaN/Infinity are not JSON, and other languages' parsers reject them.
    text = json.dumps(manifest, ensure_ascii=False, allow_nan=False)
    if len(text) > MAX_SETTINGS_CHARS:
        raise SessionFileError(
            file_path,
            message(
                QT_TRANSLATE_NOOP(
                    "FileErrors",
                    "cannot be written: its description would be {size} characters, more than the {limit} a "
                    "session may hold (too many tokens)",
                ),
                size=f"{len(text):,}",
                limit=f"{MAX_SETTINGS_CHARS:,}",
            ),
        )
    members = {SESSION_MEMBER: np.array(text)}  # first, so streaming readers see it early
    members.update(arrays)
    try:
        with atomic_write(file_path, private=private) as stream:
            _npy.write_npz(stream, members)
    except OSError as exc:
        raise SessionFileError(file_path, cannot_write(exc)) from exc


def _version_needed(model: Mapping[str, Any]) -> int:
    if not model:
        return 1
    return FORMAT_VERSION if any(key in model for key in VERSION_4_KEYS) else 3


def _checked_settings(path: Path, settings: Any) -> dict[str, Any]:
    if not isinstance(settings, Mapping):
        raise SessionFileError(
            path,
            message(
                QT_TRANSLATE_NOOP("FileErrors", "settings must be a dict, not {type}"), type=type(settings).__name__
            ),
        )
    _check_json(path, settings, "settings")
    return dict(settings)


def _check_json(path: Path, value: Any, where: str) -> None:
    """Refuse what JSON would reject or silently change (non-str keys, NaN, sets, numpy scalars)."""
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SessionFileError(
                path,
                message(
                    QT_TRANSLATE_NOOP("FileErrors", "{where} is {value}, which JSON cannot store"),
                    where=where,
                    value=value,
                ),
            )
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise SessionFileError(
                    path,
                    message(
                        QT_TRANSLATE_NOOP("FileErrors", "{where} has the key {key}; JSON keys must be strings"),
                        where=where,
                        key=repr(key),
                    ),
                )
            _check_json(path, item, f"{where}[{key!r}]")
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_json(path, item, f"{where}[{index}]")
        return
    raise SessionFileError(
        path,
        message(
            QT_TRANSLATE_NOOP("FileErrors", "{where} is a {type}, which JSON cannot store"),
            where=where,
            type=type(value).__name__,
        ),
    )


# --- reading -------------------------------------------------------------------------------


def load_session(
    path: str | os.PathLike[str],
    *,
    max_elements: int = DEFAULT_MAX_ELEMENTS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Session:
    """Read a session file safely (no pickle, size limits as for tensor files).

    Raises :class:`SessionFileError` with a one-line message for anything that is not a
    complete, valid session of a version this code understands.
    """
    file_path = Path(path)
    budget = Budget(file_path, SessionFileError, max_elements, max_bytes)
    with refusals(SessionFileError, file_path):
        _check_regular_file(file_path, budget)
        with _npy.NpzArchive(file_path, budget) as archive:
            if SESSION_MEMBER not in archive.names:
                raise budget.fail(
                    message(
                        QT_TRANSLATE_NOOP("FileErrors", "is not an attnviz session (no '{member}' member)"),
                        member=SESSION_MEMBER,
                    )
                )
            manifest = _parse_manifest(archive, budget)
            listed: list[str] = manifest["arrays"]
            _check_members(archive, listed, budget)
            arrays = {name: archive.read(name) for name in listed}
        return Session(arrays=arrays, settings=manifest["settings"], model=manifest["model"])


def _check_regular_file(path: Path, budget: Budget) -> None:
    directory = QT_TRANSLATE_NOOP("FileErrors", "is a directory, not a session file")
    if regular_file_size(path, budget, directory) == 0:
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "is empty"))


def _parse_manifest(archive: _npy.NpzArchive, budget: Budget) -> dict[str, Any]:
    raw = archive.read(SESSION_MEMBER, allow_text=True, max_text_chars=MAX_SETTINGS_CHARS)
    text = str(raw[()])
    del raw
    manifest = _json.read_description(
        text,
        kind=QT_TRANSLATE_NOOP("FileErrors", "session"),
        part=message(QT_TRANSLATE_NOOP("FileErrors", "'{member}' member"), member=SESSION_MEMBER),
        format_name=FORMAT_NAME,
        known_version=FORMAT_VERSION,
        fail=budget.fail,
    )
    settings = manifest.get("settings", {})
    if not isinstance(settings, dict):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "has damaged settings (not a JSON object)"))
    listed = manifest.get("arrays")
    if not isinstance(listed, list) or not all(isinstance(n, str) for n in listed):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "has a damaged array list (not a list of names)"))
    if len(set(listed)) != len(listed):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "lists the same array twice"))
    model = manifest.get("model", {})
    if not isinstance(model, dict):
        raise budget.fail(QT_TRANSLATE_NOOP("FileErrors", "has a damaged model description (not a JSON object)"))
    return {"settings": settings, "arrays": listed, "model": model}


def _check_members(archive: _npy.NpzArchive, listed: list[str], budget: Budget) -> None:
    # Checked before reading any data: an unlisted member means the file is not what it claims.
    if archive.other_members:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "holds an unexpected member '{name}'"), name=archive.other_members[0]
            )
        )
    present = set(archive.names) - {SESSION_MEMBER}
    missing = [n for n in listed if n not in present]
    if missing:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "is missing array '{name}' listed in its manifest"), name=missing[0]
            )
        )
    wanted = set(listed)
    extra = [n for n in archive.names if n != SESSION_MEMBER and n not in wanted]
    if extra:
        raise budget.fail(
            message(
                QT_TRANSLATE_NOOP("FileErrors", "holds array '{name}' that its manifest does not list"), name=extra[0]
            )
        )


# --- where autosaves live ------------------------------------------------------------------


def state_dir() -> Path:
    """Per-user directory for attnviz state.

    ``$ATTNVIZ_STATE_DIR`` if set (tests, portable installs); else
    ``$XDG_STATE_HOME/attnviz`` with the XDG default ``~/.local/state``; on Windows, without
    ``XDG_STATE_HOME``, ``%LOCALAPPDATA%\\attnviz``.
    """
    override = os.environ.get(STATE_DIR_ENV)
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_STATE_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "attnviz"
    local_appdata = os.environ.get("LOCALAPPDATA")
    if sys.platform == "win32" and local_appdata:
        return Path(local_appdata) / "attnviz"
    return Path.home() / ".local" / "state" / "attnviz"
