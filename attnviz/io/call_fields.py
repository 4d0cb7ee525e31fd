"""The rules for a recorded call's fields in attnviz's files: its ``name``, ``is_causal``,
``scale``, ``fidelity`` and ``note``, as sessions (``io.session_state``) and capture files
(``io.capture_file``) both store them. One set of rules and one wording of a refusal, so a call
a capture file refuses is refused by a session the same way. No Qt and no torch here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attnviz.io._json import fidelity_from_json, whole_or_float
from attnviz.state.settings import shown_value
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["call_field_error", "checked_call_fields"]


def call_field_error(index: int, key: str, value: Any, expected: str) -> ValueError:
    """The one refusal of a call's field: ``call 0: 'scale' is -1.0; expected null or a number > 0``."""
    return ValueError(
        message(
            QT_TRANSLATE_NOOP("FileErrors", "call {index}: '{key}' is {value}; expected {expected}"),
            index=index,
            key=key,
            value=shown_value(value),
            expected=expected,
        )
    )


def checked_call_fields(info: Mapping[str, Any], index: int) -> dict[str, Any]:
    """Call ``index``'s ``name``, ``is_causal``, ``scale``, ``fidelity`` and ``note`` from its
    description ``info``, each of the type it must have: a wrong one is refused (ValueError,
    ``call_field_error``), never converted (``bool("false")`` is True, ``int(1.9)`` is 1).
    Absent: no causal flag, no scale (1/sqrt(d)), no fidelity, no note; a name is required."""
    name, is_causal, note = info.get("name"), info.get("is_causal", False), info.get("note", "")
    scale, fidelity = info.get("scale"), info.get("fidelity")
    scale_value = whole_or_float(scale)
    fidelity_value = fidelity_from_json(fidelity)
    problem: tuple[str, str] | None = None
    if not isinstance(name, str) or not name:
        problem = "name", QT_TRANSLATE_NOOP("FileErrors", "a non-empty string")
    elif not isinstance(is_causal, bool):
        problem = "is_causal", QT_TRANSLATE_NOOP("FileErrors", "true or false")
    elif scale is not None and (scale_value is None or scale_value <= 0):
        problem = "scale", QT_TRANSLATE_NOOP("FileErrors", "null or a number > 0")
    elif fidelity is not None and (fidelity_value is None or fidelity_value < 0):
        problem = "fidelity", QT_TRANSLATE_NOOP("FileErrors", 'null, "inf" or a number >= 0')
    elif not isinstance(note, str):
        problem = "note", QT_TRANSLATE_NOOP("FileErrors", "a string")
    if problem is not None:
        key, expected = problem
        raise call_field_error(index, key, info.get(key), expected)
    return {"name": name, "is_causal": is_causal, "scale": scale_value, "fidelity": fidelity_value, "note": note}
