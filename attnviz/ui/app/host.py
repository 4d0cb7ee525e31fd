"""Where features live: a window with named menus, docks built on first show, toolbars.

A feature (a lab, the lessons, file actions, copy as code) is installed with
``install_...(session, host)``: the ``AppSession`` for the data, a ``Host`` for its place on
screen. ``Host`` is a small protocol, so features never reach into ``MainWindow``; tests host
a feature in a bare ``HostWindow`` without the main window's panels.

``ToolDock`` builds its contents the first time it is shown: a window with seven docks costs
what its visible parts cost, and a dock nobody opens costs nothing. Its title, toggle action
and tooltips follow a language switch; its view follows presentation mode (``set_font_scale``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QDockWidget, QMainWindow, QMenu, QToolBar, QWidget

from attnviz.tr import QT_TRANSLATE_NOOP
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.app.session import AppSession
from attnviz.ui.heatmap import PRESENTATION_SCALE
from attnviz.ui.i18n import tr_text, translate

__all__ = ["MENU_NAMES", "DockSpec", "Host", "HostWindow", "ToolDock"]

#: The menus a host has, in menu-bar order, with their titles.
MENU_NAMES: dict[str, str] = {
    "file": QT_TRANSLATE_NOOP("MainWindow", "&File"),
    "edit": QT_TRANSLATE_NOOP("MainWindow", "&Edit"),
    "view": QT_TRANSLATE_NOOP("MainWindow", "&View"),
    "presets": QT_TRANSLATE_NOOP("MainWindow", "&Presets"),
    "tools": QT_TRANSLATE_NOOP("MainWindow", "&Tools"),
    "help": QT_TRANSLATE_NOOP("MainWindow", "&Help"),
}


@dataclass(frozen=True)
class DockSpec:
    """How a view joins a host. Texts are marked sources (``QT_TRANSLATE_NOOP``), translated
    when shown and again at every language switch."""

    object_name: str
    title: str
    action_text: str
    tip: str
    shortcut: str | None = None
    area: Qt.DockWidgetArea = Qt.DockWidgetArea.BottomDockWidgetArea
    menu: str = "tools"


class Host(Protocol):
    """What a feature may ask of the window it is installed in."""

    def menu(self, name: str) -> QMenu:
        """One of ``MENU_NAMES``."""

    def add_dock(self, spec: DockSpec, build: Callable[[], QWidget]) -> "ToolDock":
        """A hidden dock whose contents ``build()`` makes the first time it is shown."""

    def add_toolbar(self, title: str, object_name: str) -> QToolBar:
        """A toolbar (``title`` a marked source)."""

    def dock(self, object_name: str) -> "ToolDock | None":
        """A dock another feature added, by its object name."""

    def widget(self) -> QWidget:
        """The top-level widget: dialogs are centred on it, its title names the file."""


class ToolDock(Retranslating, QDockWidget):
    """A dock whose view is built on first show (``view()`` builds it on demand too)."""

    #: Emitted with the view once it has been built.
    built = Signal(QWidget)

    def __init__(self, spec: DockSpec, build: Callable[[], QWidget], host: "HostWindow") -> None:
        super().__init__(tr_text(spec.title), host)
        self.spec = spec
        self._build = build
        self._view: QWidget | None = None
        self._session = host.session
        self.setObjectName(spec.object_name)  # saveState/restoreState find docks by it
        self.setAllowedAreas(Qt.DockWidgetArea.AllDockWidgetAreas)
        others = [d for d in host.findChildren(ToolDock) if d is not self and host.dockWidgetArea(d) == spec.area]
        host.addDockWidget(spec.area, self)
        if others:
            host.tabifyDockWidget(others[-1], self)
        self.hide()
        action = self.toggleViewAction()
        if spec.shortcut:
            action.setShortcut(QKeySequence(spec.shortcut))
        # Tabbed behind another dock, "show" must also bring the tab to the front.
        action.triggered.connect(lambda checked: self.raise_() if checked else None)
        menu = host.menu(spec.menu)
        menu.addAction(action)
        menu.setToolTipsVisible(True)
        self._host = host
        self.visibilityChanged.connect(self._on_visibility)
        self._session.presentationChanged.connect(self._apply_font_scale)
        self.retranslate()

    def view(self) -> QWidget:
        """The dock's view, built now if it has not been yet."""
        if self._view is None:
            self._view = self._build()
            self.setWidget(self._view)
            self._apply_font_scale(self._session.presenting)
            self.built.emit(self._view)
        return self._view

    @property
    def is_built(self) -> bool:
        return self._view is not None

    def _on_visibility(self, visible: bool) -> None:
        if not visible:
            return
        first = self._view is None
        self.view()
        if first and not self.isFloating():
            self._grow()

    def _grow(self) -> None:
        # A dock opens at its minimum size; the first time, give it a useful share of the
        # window, as much as the centre can spare (afterwards the user's choice stands).
        host = self._host
        if self.spec.area in (Qt.DockWidgetArea.BottomDockWidgetArea, Qt.DockWidgetArea.TopDockWidgetArea):
            central = host.centralWidget()
            spare = host.height() - (central.minimumSizeHint().height() if central is not None else 0) - 60
            host.resizeDocks([self], [max(260, min(spare, int(host.height() * 0.45)))], Qt.Orientation.Vertical)
        else:
            host.resizeDocks([self], [max(320, int(host.width() * 0.3))], Qt.Orientation.Horizontal)

    def _apply_font_scale(self, presenting: bool) -> None:
        scale = getattr(self._view, "set_font_scale", None)
        if callable(scale):
            scale(PRESENTATION_SCALE if presenting else 1.0)

    def retranslate(self) -> None:
        spec = self.spec
        self.setWindowTitle(tr_text(spec.title))
        action = self.toggleViewAction()
        action.setText(tr_text(spec.action_text))
        tip = tr_text(spec.tip)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        # The title bar's own buttons come without tooltips; every control of the app has one.
        name = tr_text(spec.title).split(":")[0]
        close_tip = (translate("LabWorker", "Close {name} (it stays in the View menu)") if spec.menu == "view"
                     else translate("LabWorker", "Close {name} (it stays in the Tools menu)")).format(name=name)
        tips = {"qt_dockwidget_closebutton": close_tip,
                "qt_dockwidget_floatbutton": translate("LabWorker", "Undock into its own window, or dock it back")}
        for button in self.findChildren(QAbstractButton):
            if button.objectName() in tips:
                button.setToolTip(tips[button.objectName()])


class HostWindow(Retranslating, QMainWindow):
    """A window that hosts features (see ``Host``); the main window is one, a test can use a
    bare one. Closing it ends the session (``AppSession.shutdown``)."""

    def __init__(self, session: AppSession) -> None:
        super().__init__()
        self.session = session
        if session.parent() is None:
            session.setParent(self)  # one lifetime: the session's Qt objects go with the window
        self._menus: dict[str, QMenu] = {name: self.menuBar().addMenu(tr_text(title))
                                         for name, title in MENU_NAMES.items()}
        for menu in self._menus.values():
            menu.setToolTipsVisible(True)
        self._toolbars: dict[QToolBar, str] = {}
        # (action, text, tip) of the actions made by add_action: marked sources, kept here
        # (a Qt property would lose the translation context).
        self._action_texts: list[tuple[QAction, str, str]] = []
        session.statusMessage.connect(self._show_status)

    # ------------------------------------------------------------------ Host

    def menu(self, name: str) -> QMenu:
        return self._menus[name]

    def add_dock(self, spec: DockSpec, build: Callable[[], QWidget]) -> ToolDock:
        return ToolDock(spec, build, self)

    def add_toolbar(self, title: str, object_name: str) -> QToolBar:
        toolbar = self.addToolBar(tr_text(title))
        toolbar.setObjectName(object_name)
        self._toolbars[toolbar] = title
        return toolbar

    def dock(self, object_name: str) -> ToolDock | None:
        return self.findChild(ToolDock, object_name)

    def widget(self) -> QWidget:
        return self

    # ------------------------------------------------------------------ lifecycle

    def _show_status(self, text: str, ms: int) -> None:
        self.statusBar().showMessage(text, ms)

    def add_action(self, menu: str, text: str, slot: Callable[[], object], *, shortcut: QKeySequence | str | None = None,
                   tip: str = "") -> QAction:
        """An action in ``menu`` whose text and tip (marked sources) follow the language."""
        action = QAction(tr_text(text), self)
        self._action_texts.append((action, text, tip))
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setToolTip(tr_text(tip))
            action.setStatusTip(tr_text(tip))
        action.triggered.connect(lambda _checked=False: slot())
        self.menu(menu).addAction(action)
        return action

    def retranslate(self) -> None:
        for name, menu in self._menus.items():
            menu.setTitle(tr_text(MENU_NAMES[name]))
        for toolbar, title in self._toolbars.items():
            toolbar.setWindowTitle(tr_text(title))
        for action, text, tip in self._action_texts:
            action.setText(tr_text(text))
            if tip:
                action.setToolTip(tr_text(tip))
                action.setStatusTip(tr_text(tip))
        self.session.retranslate()

    def closeEvent(self, event: QCloseEvent) -> None:
        super().closeEvent(event)
        if event.isAccepted():
            self.session.shutdown()
