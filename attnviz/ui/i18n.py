"""Languages: English (the source language) and Brazilian Portuguese, with Qt's own tools.

Every user-facing string of the UI goes through ``translate(context, text)`` (Qt's
``QCoreApplication.translate``); the non-Qt modules mark theirs with ``attnviz.text.tr``'s
``QT_TRANSLATE_NOOP`` and the UI passes them through ``tr_text`` when it shows them. The
catalogue is ``resources/translations/attnviz_<code>.ts`` (Qt Linguist's XML), compiled into
the ``.qm`` file loaded at run time. After changing user-facing strings, from the repository
root::

    pyside6-lupdate -extensions py -locations none -no-obsolete attnviz -ts resources/translations/attnviz_pt_BR.ts
    pyside6-lrelease resources/translations/attnviz_pt_BR.ts -qm resources/translations/attnviz_pt_BR.qm

then translate the new entries (Qt Linguist, or by hand: every ``type="unfinished"``) and run
the second command again. ``tests/ui/test_i18n.py`` fails while a string is untranslated or the
``.qm`` is older than the ``.ts``.

The choice is kept in QSettings (``attnviz.ui.preferences.default_settings``) under
``language``: ``"system"`` (the default: Portuguese when the system's UI language is any
Portuguese, else English), ``"en"`` or ``"pt_BR"``.
"""

from __future__ import annotations

import gc
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QSettings, QTranslator

from attnviz.text.tr import Message, Source, exception_message
from attnviz.ui.resources import resource

__all__ = [
    "LANGUAGES",
    "LANGUAGE_KEY",
    "SOURCE_LANGUAGE",
    "current_language",
    "error_text",
    "install_language",
    "qm_path",
    "resolve_language",
    "save_language",
    "saved_language",
    "startup_language",
    "system_language",
    "tr_text",
    "translate",
]

#: Language codes and their names, each in its own language (so a reader of either finds theirs).
LANGUAGES: dict[str, str] = {"en": "English", "pt_BR": "Português (Brasil)"}
#: The language the source strings are written in: it needs no catalogue.
SOURCE_LANGUAGE = "en"
LANGUAGE_KEY = "language"
#: What the QSettings value may be: a code from LANGUAGES, or follow the system.
CHOICES: tuple[str, ...] = ("system", *LANGUAGES)

# Installed translators (kept referenced: Qt does not own them) and the language they are for.
_installed: list[QTranslator] = []
_current = SOURCE_LANGUAGE


def translate(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """``text`` in the current language (``text`` itself when there is no translation).

    Called by that name so ``pyside6-lupdate`` extracts the strings: the context and the text
    must be string literals at the call.
    """
    return QCoreApplication.translate(context, text, disambiguation, n)


def tr_text(text: Any) -> str:
    """A string from a non-Qt module, in the current language.

    ``Source`` (marked with ``QT_TRANSLATE_NOOP``) is translated in its context; ``Message`` has
    its template translated and filled with its values, themselves translated when they are
    ``Source`` or ``Message``. Anything else (numbers, names, English from elsewhere) is returned
    as it is. A translation whose fields do not fit the values falls back to the English: a
    wrong catalogue entry must not hide a message.
    """
    if isinstance(text, Message):
        template = translate(text.source.context, text.source) if text.source.context else str(text.source)
        params = {
            key: tr_text(value) if isinstance(value, (Source, Message)) else value for key, value in text.params.items()
        }
        try:
            return template.format(**params)
        except (KeyError, IndexError, ValueError):
            return str(text)
    if isinstance(text, Source):
        return translate(text.context, text) if text.context else str(text)
    return text if isinstance(text, str) else str(text)


def error_text(exc: BaseException) -> str:
    """An exception's message in the current language, for a message box or a status bar.

    The engine's and ``attnviz.io``'s errors are raised with a ``Message`` (an
    ``AttnvizFileError``'s is "<file name>: <reason>", only the reason being translated); any
    other exception's text is shown as it is.
    """
    return tr_text(exception_message(exc))


def system_language(locale: QLocale | None = None) -> str:
    """The language code to use for the system's (or ``locale``'s) UI languages: Portuguese
    (Brazil, Portugal, anywhere) gets ``pt_BR``, the only Portuguese there is; the rest English."""
    loc = locale if locale is not None else QLocale.system()
    for name in [*loc.uiLanguages(), loc.name()]:
        lang = name.replace("-", "_").split("_")[0].lower()
        if lang == "pt":
            return "pt_BR"
        if lang == "en":
            return "en"
    return SOURCE_LANGUAGE


def _settings(settings: QSettings | None) -> QSettings:
    if settings is not None:
        return settings
    from attnviz.ui.preferences import default_settings

    return default_settings()


def saved_language(settings: QSettings | None = None) -> str:
    """The stored choice: "system" (also for a missing or unknown value), "en" or "pt_BR"."""
    value = _settings(settings).value(LANGUAGE_KEY, "system")
    return value if value in CHOICES else "system"


def save_language(choice: str, settings: QSettings | None = None) -> None:
    if choice not in CHOICES:
        raise ValueError(f"unknown language {choice!r}: choose one of {', '.join(CHOICES)}")
    _settings(settings).setValue(LANGUAGE_KEY, choice)


def resolve_language(choice: str) -> str:
    """A stored choice as a language code ("system" becomes the system's language)."""
    return system_language() if choice == "system" or choice not in LANGUAGES else choice


def qm_path(code: str) -> str | None:
    """The compiled catalogue of ``code`` (None for English, or when it is missing)."""
    path = resource("translations", f"attnviz_{code}.qm")
    return None if path is None else str(path)


def current_language() -> str:
    """The code of the language installed last ("en" until another is installed)."""
    return _current


def startup_language(app: QCoreApplication, override: str | None = None) -> str:
    """Install the language to start in, before any widget is built: ``override`` (a choice
    for this run), else the saved choice, else the system's. Returns the code now in use."""
    install_language(app, resolve_language(override or saved_language()))
    return current_language()


def install_language(app: QCoreApplication | None, code: str) -> bool:
    """Make ``code`` the application's language; True when it is now in use.

    Removes what an earlier call installed, then loads ``attnviz_<code>.qm`` and Qt's own
    ``qtbase_<code>.qm`` (so the standard dialogs' buttons follow) when Qt has it. English
    needs nothing. Qt then sends every widget a LanguageChange, and each sets its texts again
    (``attnviz.ui.lifecycle``). False, and English, when the catalogue cannot be loaded.
    """
    app = app or QCoreApplication.instance()
    if app is None:
        raise RuntimeError("install_language needs a QApplication")
    # Garbage widgets (a figure grabbed and dropped, a window closed) are deleted now, before
    # Qt walks the windows; during the walk the cyclic collector is off. A collection started
    # by an allocation inside some widget's changeEvent deleted a window Qt was walking: a
    # segfault in the full suite, here, after command-line tests had left figures in cycles.
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        return _install(app, code)
    finally:
        # Qt posts LanguageChange to the application, which posts it on to every window: deliver
        # both now, so every text is in the new language when this returns.
        try:
            for _ in range(2):
                QCoreApplication.sendPostedEvents(None, QEvent.Type.LanguageChange)
        finally:
            if was_enabled:
                gc.enable()


def _install(app: QCoreApplication, code: str) -> bool:
    global _current
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    _current = SOURCE_LANGUAGE
    if code == SOURCE_LANGUAGE:
        return True
    if code not in LANGUAGES:
        return False
    path = qm_path(code)
    ours = QTranslator(app)
    if path is None or not ours.load(path):
        return False
    qt_own = QTranslator(app)
    if qt_own.load(f"qtbase_{code}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt_own)
        _installed.append(qt_own)
    app.installTranslator(ours)  # installed last, so it is asked first
    _installed.append(ours)
    _current = code
    return True
