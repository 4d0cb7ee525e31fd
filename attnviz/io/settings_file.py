"""A file's settings checked against their declarations (``attnviz.state.settings``).

A session keeps its settings as a flat mapping (``{"scoring": "additive", "dropout": 0.25,
...}``). Each value is checked by its declaration (``Setting.problem``): a choice must be one of
the choices the catalogue has now, a whole number must lie in its range, a flag must be true or
false. Reading is forgiving where nothing can go wrong (an unknown key is ignored, a missing one
takes its default, each with a note) and strict where a wrong guess would show a wrong picture.

No Qt and no torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attnviz.state.document import Settings
from attnviz.state.settings import SETTINGS
from attnviz.text.tr import QT_TRANSLATE_NOOP, message

__all__ = ["read_settings"]


def read_settings(raw: Mapping[str, Any], notes: list[str]) -> tuple[Settings, dict[str, Any]]:
    """The ``Settings`` a file's mapping holds, and the values of a call's own settings it holds
    (versions 1 and 2 of the session format kept the causal flag and scale of the head on show
    among the settings). ValueError with one line for a value its declaration refuses; a note
    in ``notes`` for each unknown key, and one for the settings given their defaults."""
    values: dict[str, Any] = {}
    of_call: dict[str, Any] = {}
    for name, value in raw.items():
        setting = SETTINGS.get(name)
        if setting is None:
            notes.append(message(QT_TRANSLATE_NOOP("FileNotes", "ignored the unknown setting '{name}'"), name=name))
            continue
        problem = setting.problem(value)
        if problem is not None:
            raise ValueError(problem)
        (of_call if setting.of_call else values)[name] = setting.from_file(value)
    defaulted = sorted(s.name for s in SETTINGS.values() if not s.of_call and s.name not in values)
    if defaulted:
        notes.append(
            message(QT_TRANSLATE_NOOP("FileNotes", "used the default for {names}"), names=", ".join(defaulted))
        )
    return Settings(**values), of_call
