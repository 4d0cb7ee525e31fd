"""What attnviz's command lines (``render``, ``code``, ``doctor``) share: every failure is ONE
line on stderr in the system's language, never a traceback, with an exit status that says
what went wrong (2 for a bad command line).

``run_command`` runs a command's body and turns what it raises into that line: a
``CommandError`` (a reason already phrased for the user), an interrupt, or anything unforeseen;
``entry_point`` makes a command's ``main(argv)`` of its parser and body.
``OneLineParser`` is argparse with its error made such a line. ``Voice`` translates into the
system's language (``LANGUAGE``, ``LC_ALL``, ``LANG``: Portuguese for any Portuguese, else
English), not the app's saved choice; argparse's own words (``--help``, its error texts) stay
English.

Qt is imported only when a text marked for translation is printed in another language than
English, or when a picture is drawn (``application``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn, TextIO

from attnviz.text.tr import QT_TRANSLATE_NOOP, Message, Source, exception_message, message, one_line

if TYPE_CHECKING:
    from PySide6.QtCore import QCoreApplication

__all__ = [
    "EXIT_USAGE",
    "CommandError",
    "ExamplesFormatter",
    "OneLineParser",
    "Voice",
    "application",
    "entry_point",
    "examples_epilog",
    "quiet_qt",
    "run_command",
    "say",
]

#: The exit status of a bad command line, in every command.
EXIT_USAGE = 2


class CommandError(Exception):
    """A reason to stop, already phrased for the user (one line; a ``Message`` stays one, so it
    is printed in the system's language), with the exit status it ends with."""

    def __init__(self, text: str, status: int = 1) -> None:
        super().__init__(one_line(text))
        self.status = status


class ExamplesFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help, a one-paragraph description wrapped to the terminal as usual, text laid
    out on several lines (the examples: command lines a reader copies) kept line for line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return super()._fill_text(text, width, indent)
        return argparse.HelpFormatter._fill_text(self, text, width, indent)


EXAMPLES_HEADING = "examples:"


def examples_epilog(examples: Sequence[str]) -> str:
    """The "examples:" block that ends a command's ``--help``, one command line a line."""
    return "\n".join([EXAMPLES_HEADING, *(f"  {line}" for line in examples)])


class OneLineParser(argparse.ArgumentParser):
    """argparse prints the usage and the error on several lines; a command promises one: its
    error is raised as a ``CommandError`` with ``EXIT_USAGE``. ``examples`` end its ``--help``."""

    def __init__(self, *args: object, examples: Sequence[str] = (), **kwargs: object) -> None:
        if examples:
            kwargs.setdefault("epilog", examples_epilog(examples))
        kwargs.setdefault("formatter_class", ExamplesFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message_text: str) -> NoReturn:
        raise CommandError(
            message(
                QT_TRANSLATE_NOOP("CommandLine", "{error} (see {prog} --help)"), error=message_text, prog=self.prog
            ),
            EXIT_USAGE,
        )


def run_command(
    parser: OneLineParser,
    body: Callable[[argparse.Namespace, Voice], int],
    argv: Sequence[str] | None = None,
    *,
    failed: int = 1,
) -> int:
    """Parse ``argv`` (None: the process's arguments) with ``parser``, run ``body(args, voice)``
    and return its exit status. Whatever goes wrong becomes one line on stderr naming the
    command: a bad command line or a ``CommandError`` with its own status, an interrupt with
    130, anything else with ``failed``. ``--help`` prints and returns 0."""
    prog = parser.prog
    voice = Voice()
    try:
        try:
            args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
        except SystemExit as exc:  # --help printed
            return int(exc.code or 0)
        return body(args, voice)
    except CommandError as exc:
        say(f"{prog}: {voice.text(exception_message(exc))}", sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        # Marked outside an f-string: lupdate does not read inside one.
        interrupted = QT_TRANSLATE_NOOP("CommandLine", "interrupted")
        say(f"{prog}: {voice.text(interrupted)}", sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise is one line, never a traceback
        unexpected = message(
            QT_TRANSLATE_NOOP("CommandLine", "unexpected error: {error}"), error=f"{type(exc).__name__}: {exc}"
        )
        say(f"{prog}: {voice.text(unexpected)}", sys.stderr)
        return failed
    finally:
        voice.close()


def entry_point(
    build_parser: Callable[[], OneLineParser],
    body: Callable[[argparse.Namespace, Voice], int],
    *,
    failed: int = 1,
) -> Callable[[Sequence[str] | None], int]:
    """A command's ``main(argv=None)``: ``run_command`` with a parser built afresh for each run
    (``argv``: the arguments after the command's word; None, the process's)."""

    def main(argv: Sequence[str] | None = None) -> int:
        return run_command(build_parser(), body, argv, failed=failed)

    return main


def say(text: str, stream: TextIO) -> None:
    """Print ``text`` as one line: names from files and the command line are escaped and bounded
    (``one_line``), and what the terminal's encoding cannot show is written as escapes rather
    than failing (after a file has been written, a failure would misreport the run)."""
    line = one_line(text)
    try:
        print(line, file=stream)
    except UnicodeEncodeError:
        encoding = stream.encoding or "ascii"
        print(line.encode(encoding, "backslashreplace").decode(encoding), file=stream)


class Voice:
    """Text for the terminal in the system's language.

    English needs nothing. Otherwise the first text marked for translation makes the
    QApplication a drawing needs anyway (or uses the one there is: the GUI, tests) and installs
    the system's catalogue; :meth:`close` puts back the language that was installed before, so
    a command run inside the app leaves the app's language alone.
    """

    def __init__(self) -> None:
        self._ready = False
        self._restore: str | None = None
        #: English without a catalogue or Qt (``_install`` found no Portuguese to look for).
        self._plain = False

    def text(self, text: str) -> str:
        """``text`` (English, a ``Source`` or a ``Message``) in the system's language."""
        if not isinstance(text, (Source, Message)):
            return str(text)
        try:
            self._install()
            if self._plain:
                return str(text)  # English, and no Qt loaded to say so
            from attnviz.ui.i18n import tr_text

            return tr_text(text)
        except Exception:  # noqa: BLE001 - a broken catalogue or Qt must not hide the message itself
            return str(text)

    def _install(self) -> None:
        if self._ready:
            return
        self._ready = True
        if "attnviz.ui.i18n" not in sys.modules and not _may_be_portuguese():
            # English wanted, and English installed (no app has loaded a catalogue): importing
            # Qt to learn that cost a refused command most of its second.
            self._plain = True
            return
        from attnviz.ui.i18n import current_language, install_language, system_language

        code, before = system_language(), current_language()
        if code != before and install_language(application(), code):
            self._restore = before

    def close(self) -> None:
        if self._restore is not None:
            from attnviz.ui.i18n import install_language

            install_language(None, self._restore)
            self._restore = None


def _may_be_portuguese() -> bool:
    """Whether the system's language may be Portuguese, the one language besides English with a
    catalogue, judged without Qt where Qt itself reads the environment (POSIX but macOS: the
    ``LANGUAGE`` list, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``): False only when none of them names
    Portuguese. Elsewhere (Windows, macOS settings) only Qt can tell: True."""
    if sys.platform.startswith(("win", "darwin")):
        return True
    names = ":".join(os.environ.get(name, "") for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"))
    return any(part.strip().lower().startswith("pt") for part in names.split(":"))


@contextlib.contextmanager
def quiet_qt(prog: str = "attnviz") -> Iterator[None]:
    """Qt chats on stderr ("This plugin does not support propagateSizeHints()"); a command's
    stderr is for its one failure line, so only Qt's own critical and fatal messages pass."""
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    def quiet(kind: QtMsgType, _context: object, text: str) -> None:
        if kind in (QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            say(f"{prog}: Qt: {text}", sys.stderr)

    previous = qInstallMessageHandler(quiet)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)


def application() -> QCoreApplication:
    """The application: the one there is when called from inside one (tests, the GUI), else a
    new QApplication (drawing needs one), on the offscreen platform when there is no display."""
    _ensure_platform()
    from PySide6.QtWidgets import QApplication

    with quiet_qt():
        return QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "attnviz"])


def _ensure_platform() -> None:
    """Use Qt's offscreen platform when there is no display to connect to."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return
    if sys.platform.startswith(("win", "darwin")):
        return  # these always have a window system; nothing is shown anyway
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
