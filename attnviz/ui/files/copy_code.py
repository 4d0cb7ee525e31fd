"""Copy as code: the current inputs and settings as a script, on the clipboard, in the user's framework.

``install_copy_code(session, host)`` adds Edit › Copy as code (Ctrl+Shift+C), Edit › Code
framework (PyTorch, TensorFlow, MXNet, JAX, or the attnviz script), and a "Code" toolbar whose
button copies and whose arrow picks the framework. The choice is remembered in QSettings
("copyCode/framework"). The script is ``attnviz.snippets``' snippet of the document's state: plain
framework code that, run, computes the weights the window shows. When the inputs are too big to
embed, their arrays go to a data file whose place the user chooses (``ask_data_path`` is
injectable so tests need no dialog); the script loads it by that path. The snippet is written
from the result the compute thread made for the current inputs: no attention is computed on the
GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QSettings
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QToolBar, QToolButton, QWidget

from attnviz.snippets import DATA_FILE, FRAMEWORK_TITLES, FRAMEWORKS, Snippet, SnippetError, generate, snippet_input
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import Host
from attnviz.ui.app.session import AppSession
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.preferences import default_settings

__all__ = [
    "COPY_CODE_SHORTCUT",
    "DEFAULT_FRAMEWORK",
    "FRAMEWORK_KEY",
    "AskPath",
    "CodeCopier",
    "ask_data_path_dialog",
    "install_copy_code",
]

COPY_CODE_SHORTCUT = "Ctrl+Shift+C"
#: Where the framework chosen is remembered, and the one chosen until then.
FRAMEWORK_KEY = "copyCode/framework"
DEFAULT_FRAMEWORK = "pytorch"

#: ``ask(parent, suggested_path) -> chosen path, or None when the user cancels``.
AskPath = Callable[[QWidget, str], "str | None"]


def ask_data_path_dialog(parent: QWidget, suggested: str) -> str | None:
    """Ask where to save the snippet's data file (a .npz); None when cancelled."""
    path, _filter = QFileDialog.getSaveFileName(
        parent,
        translate("CopyCode", "Save the data file the script loads"),
        suggested,
        translate("CopyCode", "NumPy archive (*.npz)"),
    )
    if not path:
        return None
    return path if path.lower().endswith(".npz") else path + ".npz"


def framework_title(framework: str) -> str:
    """A framework as menus and messages name it (the attnviz script says what it needs)."""
    if framework == "attnviz":
        return translate("CopyCode", "attnviz (a call of attnviz.engine.attend)")
    return FRAMEWORK_TITLES[framework]


class CodeCopier(QObject):
    """The action, the framework choice and the toolbar that copy the current state as code
    (``copy()`` does it; ``set_framework()`` chooses and remembers the framework)."""

    def __init__(
        self,
        session: AppSession,
        host: Host,
        ask_data_path: AskPath | None = None,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__(host.widget())
        self.session = session
        self.host = host
        self.ask_data_path: AskPath = ask_data_path or ask_data_path_dialog
        self.settings = settings if settings is not None else default_settings()
        chosen = self.settings.value(FRAMEWORK_KEY, DEFAULT_FRAMEWORK)
        #: The framework scripts are written in.
        self.framework = chosen if chosen in FRAMEWORKS else DEFAULT_FRAMEWORK
        #: The last script copied and the data file written with it (None: none needed).
        self.last_code: str | None = None
        self.last_snippet: Snippet | None = None
        self.last_data_path: Path | None = None

        self.action = QAction(host.widget())
        self.action.setShortcut(QKeySequence(COPY_CODE_SHORTCUT))
        self.action.triggered.connect(lambda _checked=False: self.copy())
        self.framework_menu = QMenu(host.widget())
        self.framework_menu.setObjectName("codeFrameworkMenu")
        self._group = QActionGroup(self)
        self._group.setExclusive(True)
        self.framework_actions: dict[str, QAction] = {}
        for name in FRAMEWORKS:
            choice = QAction(self.framework_menu)
            choice.setCheckable(True)
            choice.setChecked(name == self.framework)
            choice.triggered.connect(lambda _checked=False, name=name: self.set_framework(name))
            self._group.addAction(choice)
            self.framework_menu.addAction(choice)
            self.framework_actions[name] = choice
        edit_menu = host.menu("edit")
        edit_menu.addSeparator()
        edit_menu.addAction(self.action)
        edit_menu.addMenu(self.framework_menu)
        self.toolbar: QToolBar = host.add_toolbar(QT_TRANSLATE_NOOP("CopyCode", "Code"), "codeToolBar")
        self.toolbar.addAction(self.action)
        # The button copies; its arrow opens the framework menu.
        button = self.toolbar.widgetForAction(self.action)
        assert isinstance(button, QToolButton)
        self.button = button
        button.setMenu(self.framework_menu)
        button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        self.framework_menu.aboutToShow.connect(self.follow_setting)
        self.retranslate()
        session.languageChanged.connect(self.retranslate)

    def retranslate(self) -> None:
        title = framework_title(self.framework)
        tip = translate(
            "CopyCode",
            "Copy a {framework} script that rebuilds these inputs and computes the same attention (Ctrl+Shift+C); "
            "the arrow chooses the framework",
        ).format(framework=title)
        self.action.setText(translate("CopyCode", "Copy as &code"))
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)
        self.framework_menu.setTitle(translate("CopyCode", "Code &framework"))
        self.framework_menu.setToolTip(translate("CopyCode", "The framework Copy as code writes in"))
        for name, choice in self.framework_actions.items():
            choice.setText(framework_title(name))
        self.toolbar.setToolTip(translate("CopyCode", "Copy the current inputs as a runnable script"))

    def set_framework(self, framework: str) -> None:
        """Write scripts in ``framework`` (one of ``attnviz.snippets.FRAMEWORKS``) from now on,
        and remember it."""
        if framework not in FRAMEWORKS:
            raise ValueError(f"unknown framework {framework!r}: expected one of {', '.join(FRAMEWORKS)}")
        self.framework = framework
        self.framework_actions[framework].setChecked(True)
        self.settings.setValue(FRAMEWORK_KEY, framework)
        self.retranslate()

    def follow_setting(self) -> None:
        """Take the framework chosen meanwhile elsewhere under the same setting (the pipeline's
        code panel)."""
        chosen = self.settings.value(FRAMEWORK_KEY, DEFAULT_FRAMEWORK)
        if chosen in FRAMEWORKS and chosen != self.framework:
            self.framework = chosen
            self.framework_actions[chosen].setChecked(True)
            self.retranslate()

    def copy(self) -> str | None:
        """Put the script on the clipboard; returns it (None when cancelled or failed)."""
        self.follow_setting()
        # The head on show: the snippet is of that head, as the window shows it.
        state, focus = self.session.document.state, self.session.selection.focus
        # The snippet is written from the result the window shows: the compute thread already
        # made it, and computing it again here would freeze the window on a big input.
        outcome = self.session.current_outcome()
        if outcome is None:
            self._status(
                translate(
                    "CopyCode",
                    "Copy as code: these inputs are still being computed; try again "
                    "when the status bar says up to date",
                )
            )
            return None
        title = framework_title(self.framework)
        try:
            inp = snippet_input(state, outcome, focus=focus)
            snippet = generate(inp, self.framework)
        except SnippetError as exc:
            self._status(
                translate("CopyCode", "Could not write the script: {error}").format(error=tr_text(exc.args[0]))
            )
            return None
        except (ValueError, MemoryError) as exc:
            self._status(translate("CopyCode", "Could not write the script: {error}").format(error=exc))
            return None
        data_path: Path | None = None
        if snippet.data:
            suggested = str(Path.home() / DATA_FILE)
            chosen = self.ask_data_path(self.host.widget(), suggested)
            if not chosen:
                self._status(
                    translate(
                        "CopyCode",
                        "Copy as code cancelled: these inputs are too big for the script "
                        "itself, so it needs a data file",
                    )
                )
                return None
            data_path = Path(chosen).expanduser().resolve()
            # Forward slashes: the path goes into a Python string literal in the script.
            snippet = generate(inp, self.framework, data_file=data_path.as_posix())
            try:
                snippet.save_data(data_path)
            except OSError as exc:
                self._status(
                    translate("CopyCode", "Could not write the data file {path}: {error}").format(
                        path=data_path, error=exc.strerror or exc
                    )
                )
                return None
        code = snippet.code
        QGuiApplication.clipboard().setText(code)
        self.last_code, self.last_snippet, self.last_data_path = code, snippet, data_path
        lines = code.count("\n")
        if data_path is not None:
            done = translate(
                "CopyCode",
                "Copied a {lines}-line {framework} script that reproduces these weights; it loads "
                "its larger arrays from {path}",
            ).format(lines=lines, framework=title, path=data_path)
        else:
            done = translate(
                "CopyCode", "Copied a {lines}-line {framework} script that reproduces these weights"
            ).format(lines=lines, framework=title)
        if snippet.leaves_out:
            done += "; " + translate("CopyCode", "its first lines say what it leaves out")
        self._status(done)
        return code

    def _status(self, text: str) -> None:
        self.session.show_status(text, 12000)


def install_copy_code(
    session: AppSession, host: Host, ask_data_path: AskPath | None = None, settings: QSettings | None = None
) -> CodeCopier:
    """Edit › Copy as code (Ctrl+Shift+C), Edit › Code framework and a Code toolbar; returns the copier."""
    return CodeCopier(session, host, ask_data_path, settings)
