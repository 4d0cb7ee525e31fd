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

Values come from outside (file names, array names, setting keys, exception texts), so a
``Message`` cleans its ``str`` values when it is made: a line break or tab becomes a space, and
what a terminal would act on or cannot print is escaped (``clean``). ``one_line`` then bounds
the length, eliding long values and saying how much was left out. Every message is therefore one
line, safe to print, whatever names a file holds.

No Qt here: everything is plain Python, so ``attnviz.engine`` can use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from attnviz.text.safe import printable

__all__ = [
    "Message",
    "QT_TRANSLATE_NOOP",
    "Source",
    "clean",
    "exception_message",
    "joined",
    "message",
    "one_line",
    "plural",
]

#: The longest line ``one_line`` returns, and the longest value it leaves whole.
MAX_LINE_CHARS = 1000
MAX_VALUE_CHARS = 300


class Source(str):
    """An English text marked for translation in ``context`` (its value is the English)."""

    context: str

    def __new__(cls, context: str, text: str) -> Source:
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

    def __new__(cls, source: str, **params: Any) -> Message:
        # Values are cleaned once, here: the English and every translation are filled with them.
        params = {key: clean(value) if _is_data(value) else value for key, value in params.items()}
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
    A long list stops after ``MAX_VALUE_CHARS`` or so and ends with "and N more".
    """
    shown: list[str] = []
    length = 0
    for item in items:
        if shown and length + len(item) > MAX_VALUE_CHARS:
            break
        shown.append(item)
        length += len(item) + len(separator)
    left = len(items) - len(shown)
    if left:
        shown.append(Message(QT_TRANSLATE_NOOP("Messages", "and {n} more"), n=f"{left:,}"))
    escaped = separator.replace("{", "{{").replace("}", "}}")
    template = escaped.join(f"{{item{index}}}" for index in range(len(shown)))
    return Message(template, **{f"item{index}": item for index, item in enumerate(shown)})


def clean(text: str) -> str:
    """``text`` fit for one line of a terminal or a status bar: each line break or tab (with the
    spaces around it) becomes one space; control characters, lone surrogates and bidirectional
    controls are escaped (``\\x1b``, ``\\u202e``; an undecodable byte of a file name as
    ``\\xff``). The one sanitiser, ``safe_text.printable``, which generated code and SVG use too."""
    return printable(text)


def _is_data(value: Any) -> bool:
    # Source and Message values are ours (a literal, an already cleaned message); any other
    # str came from outside. Numbers and tuples are formatted by str.format (tuples with repr).
    return isinstance(value, str) and not isinstance(value, (Source, Message))


def one_line(text: str) -> str:
    """``text`` for one-line displays (a status bar, a message box, a CLI's error line): every run
    of whitespace made one space (and none at the ends), control characters escaped (``clean``),
    and at most ``MAX_LINE_CHARS`` long.

    A ``Message`` stays a ``Message`` so it can still be translated: its values are squeezed
    and bounded instead (the templates are one-line literals already; exception texts quoted in
    them are not), a value longer than ``MAX_VALUE_CHARS`` keeping its start and end around a
    note of how much was left out. Should that not give exactly the squeezed English (whitespace
    at the edge of a value, next to a space of the template) or still be too long, the squeezed,
    elided English is returned: the English must read the same whichever way it was built.
    """
    if isinstance(text, Message):
        bounded = _bounded(text)
        english = _squeeze(bounded)
        return bounded if str(bounded) == english and len(english) <= MAX_LINE_CHARS else _elided(english)
    if isinstance(text, Source):
        return text if _squeeze(text) == text else _squeeze(text)
    return _elided(_squeeze(clean(text)))


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def _bounded(value: Message) -> Message:
    params = {}
    for key, item in value.params.items():
        if isinstance(item, Message) and item.source is not _ELISION:  # an elided text stays as it was cut
            item = _bounded(item)
        elif _is_data(item):
            # Inner runs only: a value's edge spaces are part of the sentence it is put into.
            item = _elided(re.sub(r"\s+", " ", item), MAX_VALUE_CHARS)
        params[key] = item
    return Message(value.source, **params)


def _elided(text: str, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` when it is at most ``limit`` long, else its start and end around a note of how
    many characters were left out (a ``Message``, translatable)."""
    if len(text) <= limit:
        return text
    start, end = text[: limit * 2 // 3], text[-(limit // 4) :]
    return Message(_ELISION, start=start, count=f"{len(text) - len(start) - len(end):,}", end=end)


_ELISION = QT_TRANSLATE_NOOP("Messages", "{start} … ({count} characters left out) … {end}")


def exception_message(exc: BaseException) -> str:
    """The message ``exc`` was raised with, still a ``Source`` or ``Message`` when it was one.

    ``str(exc)`` gives the English as a plain ``str``, which can no longer be translated; the
    UI passes this to ``attnviz.i18n.tr_text`` instead (``attnviz.i18n.error_text`` does both).
    """
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, (Source, Message)) else str(exc)
