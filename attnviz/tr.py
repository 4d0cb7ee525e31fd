"""Translatable text for modules that must not import Qt (the engine, presets, lessons).

Qt's ``lupdate`` finds strings by the name of the call around them. ``QT_TRANSLATE_NOOP(context,
text)`` is one of the names it knows without extra options, so the non-Qt modules mark their
user-facing strings with the function of that name defined here. It returns the text unchanged
(a ``Source``: a ``str`` that also remembers its context), so scripts and tests keep seeing
the English; the UI translates it when it displays it (``attnviz.i18n.tr_text``).

Sentences with numbers in them are ``Message`` objects: again a ``str`` whose value is the
English sentence, but one that remembers the template (a ``Source`` with ``{name}`` fields) and
the values it was filled with. The UI formats the *translated* template with the same values,
translating values that are themselves ``Source`` or ``Message`` objects (a counted noun, a
nested phrase) the same way. Where English inflects for the count ("1 row", "2 rows") the
caller picks one of two templates with ``plural``; each is translated on its own.

No Qt here: everything is plain Python, so ``attnviz.engine`` can use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["Message", "QT_TRANSLATE_NOOP", "Source", "exception_message", "joined", "message", "one_line", "plural"]


class Source(str):
    """An English text marked for translation in ``context`` (its value is the English)."""

    context: str

    def __new__(cls, context: str, text: str) -> "Source":
        obj = super().__new__(cls, text)
        obj.context = context
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        # str subclasses pickle and copy through __new__(cls, str(self)), which lacks the context.
        return (Source, (self.context, str(self)))


def QT_TRANSLATE_NOOP(context: str, text: str) -> Source:  # noqa: N802 - the name lupdate looks for
    """Mark ``text`` for translation in ``context``; returns it unchanged (as a ``Source``)."""
    return Source(context, text)


class Message(str):
    """The English text of ``source.format(**params)``, remembering both for translation."""

    source: Source
    params: dict[str, Any]

    def __new__(cls, source: str, **params: Any) -> "Message":
        obj = super().__new__(cls, str.format(source, **params))
        obj.source = source if isinstance(source, Source) else Source("", source)
        obj.params = params
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_message, (self.source, self.params))


def _rebuild_message(source: Source, params: dict[str, Any]) -> Message:
    return Message(source, **params)


def message(source: str, **params: Any) -> Message:
    """``source`` (a template marked with ``QT_TRANSLATE_NOOP``) filled with ``params``."""
    return Message(source, **params)


def plural(n: int, one: str, many: str, **params: Any) -> Message:
    """``one`` when ``n`` is 1, else ``many``, filled with ``n`` and ``params``.

    Both templates are marked for translation separately, so a language whose words agree with
    the count in other places than English's (a verb, an adjective) translates each whole.
    """
    return Message(one if n == 1 else many, n=n, **params)


def joined(items: Sequence[str], separator: str = ", ") -> str:
    """``separator.join(items)`` (the English), each item translated on its own when shown.

    For lists of phrases ("a (nested too deeply), b (not an .npy array)"): ``", ".join`` would
    make one plain ``str`` of them. The separator is punctuation, the same in every language.
    """
    escaped = separator.replace("{", "{{").replace("}", "}}")
    template = escaped.join(f"{{item{index}}}" for index in range(len(items)))
    return Message(template, **{f"item{index}": item for index, item in enumerate(items)})


def one_line(text: str) -> str:
    """``text`` with every run of whitespace made one space (and none at the ends), for one-line
    displays (a status bar, a message box, a CLI's error line).

    A ``Message`` stays a ``Message`` so it can still be translated: its values are squeezed
    instead (the templates are one-line literals already; exception texts quoted in them are
    not). Should squeezing the values not give exactly the squeezed English (whitespace at the
    edge of a value, next to a space of the template), the squeezed English is returned: the
    English must read the same whichever way it was built.
    """
    if isinstance(text, Message):
        squeezed = Message(text.source, **{key: _squeeze_value(value) for key, value in text.params.items()})
        english = " ".join(text.split())
        return squeezed if str(squeezed) == english else english
    if isinstance(text, Source):
        return text if " ".join(text.split()) == text else " ".join(text.split())
    return " ".join(str(text).split())


def _squeeze_value(value: Any) -> Any:
    if isinstance(value, Message):
        return Message(value.source, **{key: _squeeze_value(v) for key, v in value.params.items()})
    if isinstance(value, Source) or not isinstance(value, str):
        return value  # a literal, or data formatted by str.format (numbers, shapes)
    # Inner runs only: a value's edge spaces are part of the sentence it is put into.
    return re.sub(r"\s+", " ", value)


def exception_message(exc: BaseException) -> str:
    """The message ``exc`` was raised with, still a ``Source`` or ``Message`` when it was one.

    ``str(exc)`` gives the English as a plain ``str``, which can no longer be translated; the
    UI passes this to ``attnviz.i18n.tr_text`` instead (``attnviz.i18n.error_text`` does both).
    """
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, (Source, Message)) else str(exc)
