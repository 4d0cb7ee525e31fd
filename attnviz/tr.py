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

from typing import Any

__all__ = ["Message", "QT_TRANSLATE_NOOP", "Source", "message", "plural"]


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
