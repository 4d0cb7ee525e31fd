"""Where features live: a window with named menus, tool views built on first show, toolbars.

A feature (a lab, the lessons, file actions, copy as code) is installed with
``install_...(session, host)``: the ``AppSession`` for the data, a ``Host`` for its place on
screen. ``Host`` is a small protocol, so features never reach into ``MainWindow``; tests host
a feature in a bare ``HostWindow`` without the main window's panels.

A big view (the pipeline, side by side, the labs) opens as a tab of the window's central area
(``ToolTab``): it gets the whole area instead of squeezing the main heatmaps into a strip, and
it can be detached into a window of its own (a second screen, a projector). A narrow
companion (the lesson) is a dock beside the main view (``ToolDock``). Either builds its
contents the first time it is shown: views nobody opens cost nothing. Titles, toggle actions
and tooltips follow a language switch. What a view shows, and how (presentation mode, colour
map, theme), the view follows from the session itself (``view_base.SessionView``): a host only
gives it a place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton,
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QMainWindow,
    QMenu,
    QScrollArea,
    QTabBar,
    QTabWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.session import AppSession
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.lifecycle import Retranslating

__all__ = ["MENU_NAMES", "DockSpec", "Host", "HostWindow", "ToolDock", "ToolPanel", "ToolTab"]

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
    when shown and again at every language switch. ``placement``: "tab" (a tab of the central
    area, detachable) or "dock" (a dock in ``area``, for narrow companions of the main view)."""

    object_name: str
    title: str
    action_text: str
    tip: str
    shortcut: str | None = None
    area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea
    menu: str = "tools"
    placement: str = "tab"


class Host(Protocol):
    """What a feature may ask of the window it is installed in."""

    def menu(self, name: str) -> QMenu:
        """One of ``MENU_NAMES``."""

    def add_dock(self, spec: DockSpec, build: Callable[[], QWidget]) -> ToolPanel:
        """A hidden tool view (a tab or a dock, by ``spec.placement``) whose contents ``build()``
        makes the first time it is shown."""

    def add_toolbar(self, title: str, object_name: str) -> QToolBar:
        """A toolbar (``title`` a marked source)."""

    def dock(self, object_name: str) -> ToolPanel | None:
        """A tool view another feature added, by its object name."""

    def widget(self) -> QWidget:
        """The top-level widget: dialogs are centred on it, its title names the file."""


def _tab_title(spec: DockSpec) -> str:
    """A tab's text: the title up to its colon ("Masking lab", not "Masking lab: every
    convention"), so five tabs fit a projector's width; the whole title is the tooltip."""
    return tr_text(spec.title).split(":")[0].strip()


def _close_tip(spec: DockSpec) -> str:
    name = tr_text(spec.title).split(":")[0]
    return (
        translate("LabWorker", "Close {name} (it stays in the View menu)")
        if spec.menu == "view"
        else translate("LabWorker", "Close {name} (it stays in the Tools menu)")
    ).format(name=name)


class ToolDock(Retranslating, QDockWidget):
    """A dock whose view is built on first show (``view()`` builds it on demand too)."""

    #: Emitted with the view once it has been built.
    built = Signal(QWidget)

    def __init__(self, spec: DockSpec, build: Callable[[], QWidget], host: HostWindow) -> None:
        super().__init__(tr_text(spec.title), host)
        self.spec = spec
        self._build = build
        self._view: QWidget | None = None
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
        host.hold_shortcut(action)
        self._host = host
        self.visibilityChanged.connect(self._on_visibility)
        self.retranslate()

    def is_current_tab(self) -> bool:
        """Whether the view is on show (a dock has no tab of the central area: it is when open
        and not tabbed behind another dock)."""
        return self.isVisible() and not self.visibleRegion().isEmpty()

    def view(self) -> QWidget:
        """The dock's view, built now if it has not been yet."""
        if self._view is None:
            self._view = self._build()
            self.setWidget(self._view)
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

    def retranslate(self) -> None:
        spec = self.spec
        self.setWindowTitle(tr_text(spec.title))
        action = self.toggleViewAction()
        action.setText(tr_text(spec.action_text))
        tip = tr_text(spec.tip)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        # The title bar's own buttons come without tooltips; every control of the app has one.
        tips = {
            "qt_dockwidget_closebutton": _close_tip(spec),
            "qt_dockwidget_floatbutton": translate("LabWorker", "Undock into its own window, or dock it back"),
        }
        for button in self.findChildren(QAbstractButton):
            if button.objectName() in tips:
                button.setToolTip(tips[button.objectName()])


class _DetachedWindow(Retranslating, QWidget):
    """A tool view in a window of its own; closing it closes the view, "Back into the main window"
    docks it back as a tab."""

    def __init__(self, tool: ToolTab) -> None:
        super().__init__(tool.host, Qt.WindowType.Window)
        self._tool = tool
        self.setObjectName(tool.objectName() + "Window")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        bar = QHBoxLayout()
        bar.addStretch(1)
        self.back = QToolButton()
        self.back.clicked.connect(lambda: tool.setFloating(False))
        bar.addWidget(self.back)
        layout.addLayout(bar)
        self.resize(1100, 700)
        self.retranslate()

    def set_view(self, view: QWidget) -> None:
        self.layout().addWidget(view)  # type: ignore[union-attr]
        view.show()

    def retranslate(self) -> None:
        self.setWindowTitle(f"{tr_text(self._tool.spec.title)} — attnviz")
        self.back.setText(translate("LabWorker", "Back into the main window"))
        self.back.setToolTip(translate("LabWorker", "Show this view as a tab of the main window again"))

    def closeEvent(self, event: QCloseEvent) -> None:
        super().closeEvent(event)
        if event.isAccepted():
            self._tool.closed_by_user()


class ToolTab(QObject):
    """A tool view in a tab of the host's central area, or detached into a window of its own.

    The interface is a dock's (``show``, ``hide``, ``isVisible``, ``raise_``, ``setFloating``,
    ``toggleViewAction``) so a feature does not care where its view lives. ``isVisible()`` means
    open: a tab behind another is open but its view is hidden (and computes nothing).
    """

    built = Signal(QWidget)

    def __init__(self, spec: DockSpec, build: Callable[[], QWidget], host: HostWindow) -> None:
        super().__init__(host)
        self.spec = spec
        self.host = host
        self._build = build
        self._view: QWidget | None = None
        # What the tab (or the detached window) holds: the view in a scroll area, so that a
        # view's minimum size never makes the window wider or taller than the screen.
        self._page: QScrollArea | None = None
        self._open = False
        self._floating = False
        self._window: _DetachedWindow | None = None
        self.setObjectName(spec.object_name)
        self._action = QAction(host)
        self._action.setCheckable(True)
        if spec.shortcut:
            self._action.setShortcut(QKeySequence(spec.shortcut))
        # Its shortcut and menu entry SHOW the view (and bring it in front), never close it: on a
        # tab that was open but behind another, a toggle would close it in front of a class. The
        # tab's close button closes it.
        self._action.triggered.connect(lambda _checked: self.show())
        menu = host.menu(spec.menu)
        menu.addAction(self._action)
        menu.setToolTipsVisible(True)
        host.hold_shortcut(self._action)
        host.session.languageChanged.connect(self.retranslate)
        self.retranslate()

    # ------------------------------------------------------------------ dock-like interface

    def toggleViewAction(self) -> QAction:  # noqa: N802 - QDockWidget's name
        return self._action

    def view(self) -> QWidget:
        """The view, built now if it has not been yet."""
        if self._view is None:
            self._view = self._build()
            self._view.setObjectName(self.spec.object_name + "View")
            page = self._page = QScrollArea()
            page.setObjectName(self.spec.object_name + "Page")
            page.setFrameShape(QFrame.Shape.NoFrame)
            page.setWidgetResizable(True)
            page.setWidget(self._view)
            self.built.emit(self._view)
        return self._view

    def _tab_page(self) -> QScrollArea:
        self.view()
        assert self._page is not None
        return self._page

    @property
    def is_built(self) -> bool:
        return self._view is not None

    def isVisible(self) -> bool:  # noqa: N802
        return self._open

    def isFloating(self) -> bool:  # noqa: N802
        return self._floating

    def is_current_tab(self) -> bool:
        """Whether the view is the tab on show in the host's central area (or open in a window
        of its own: then it is on show as far as the host can tell)."""
        if self._floating:
            return self._open
        return self._page is not None and self.host.tool_tabs.currentWidget() is self._page

    def show(self) -> None:
        """Open the view (as a tab, made current; or in its own window) and bring it forward."""
        view = self.view()
        self._open = True
        if self._floating:
            window = self._ensure_window()
            window.show()
            window.raise_()
            window.activateWindow()
        else:
            tabs = self.host.tool_tabs
            page = self._tab_page()
            if tabs.indexOf(page) < 0:
                tabs.addTab(page, _tab_title(self.spec))
                self._update_tab()
            tabs.setCurrentWidget(page)
            view.show()
        self._action.setChecked(True)

    def raise_(self) -> None:
        self.show()

    def hide(self) -> None:
        """Close the view (it stays built and can be opened again from its menu)."""
        self._open = False
        self._action.setChecked(False)
        if self._page is not None:
            index = self.host.tool_tabs.indexOf(self._page)
            if index >= 0:
                self.host.tool_tabs.removeTab(index)  # the view stays, hidden, for next time
        if self._window is not None and self._window.isVisible():
            self._window.hide()

    def close(self) -> None:
        self.hide()

    def setFloating(self, floating: bool) -> None:  # noqa: N802
        """Detach the view into a window of its own (True) or bring it back as a tab (False)."""
        was_open = self._open
        if floating == self._floating:
            return
        self.hide()
        self._floating = floating
        if floating:
            self._ensure_window().set_view(self._tab_page())
        elif self._window is not None:
            self._window.hide()
        if was_open or floating:
            self.show()

    def closed_by_user(self) -> None:
        """The detached window was closed: the view is closed too (it stays detached)."""
        self._open = False
        self._action.setChecked(False)

    def _ensure_window(self) -> _DetachedWindow:
        if self._window is None:
            self._window = _DetachedWindow(self)
            self._window.set_view(self._tab_page())
        return self._window

    def _update_tab(self) -> None:
        tabs = self.host.tool_tabs
        if self._page is not None and (index := tabs.indexOf(self._page)) >= 0:
            tabs.setTabText(index, _tab_title(self.spec))
            tabs.setTabToolTip(index, f"{tr_text(self.spec.title)}\n{tr_text(self.spec.tip)}")
            close = tabs.tabBar().tabButton(index, QTabBar.ButtonPosition.RightSide)
            if close is not None:
                close.setToolTip(_close_tip(self.spec))

    def close_button(self) -> QWidget | None:
        """The tab's close button (None while the view is not open as a tab)."""
        tabs = self.host.tool_tabs
        if self._page is None or (index := tabs.indexOf(self._page)) < 0:
            return None
        return tabs.tabBar().tabButton(index, QTabBar.ButtonPosition.RightSide)

    def retranslate(self) -> None:
        self._action.setText(tr_text(self.spec.action_text))
        tip = tr_text(self.spec.tip)
        self._action.setToolTip(tip)
        self._action.setStatusTip(tip)
        self._update_tab()


#: What ``Host.add_dock`` gives: a tab of the central area or a dock.
ToolPanel = ToolTab | ToolDock


class HostWindow(Retranslating, QMainWindow):
    """A window that hosts features (see ``Host``); the main window is one, a test can use a
    bare one. Closing it ends the session (``AppSession.shutdown``)."""

    def __init__(self, session: AppSession) -> None:
        super().__init__()
        self.session = session
        if session.parent() is None:
            session.setParent(self)  # one lifetime: the session's Qt objects go with the window
        self._menus: dict[str, QMenu] = {
            name: self.menuBar().addMenu(tr_text(title)) for name, title in MENU_NAMES.items()
        }
        for menu in self._menus.values():
            menu.setToolTipsVisible(True)
        self._toolbars: dict[QToolBar, str] = {}
        # (action, text, tip) of the actions made by add_action: marked sources, kept here
        # (a Qt property would lose the translation context).
        self._action_texts: list[tuple[QAction, str, str]] = []
        # The central area: tool views open as tabs here (the main window's own view is the
        # first tab, which cannot be closed).
        self.tool_tabs = QTabWidget()
        self.tool_tabs.setObjectName("toolTabs")
        self.tool_tabs.setDocumentMode(True)
        self.tool_tabs.setTabsClosable(True)
        self.tool_tabs.setMovable(True)
        self.tool_tabs.tabCloseRequested.connect(self._close_tab)
        self.tool_tabs.tabBar().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tool_tabs.tabBar().customContextMenuRequested.connect(self._tab_menu)
        self._corner = QWidget()
        corner_layout = QHBoxLayout(self._corner)
        corner_layout.setContentsMargins(0, 0, 0, 0)
        self.tool_tabs.setCornerWidget(self._corner, Qt.Corner.TopRightCorner)
        self._corner.hide()
        self.setCentralWidget(self.tool_tabs)
        self._main_title = ""
        self._retranslate_tabs()
        session.statusMessage.connect(self._show_status)

    # ------------------------------------------------------------------ Host

    def menu(self, name: str) -> QMenu:
        return self._menus[name]

    def add_dock(self, spec: DockSpec, build: Callable[[], QWidget]) -> ToolPanel:
        if spec.placement == "dock":
            return ToolDock(spec, build, self)
        return ToolTab(spec, build, self)

    def add_toolbar(self, title: str, object_name: str) -> QToolBar:
        """A toolbar in the tab bar's free corner: on a 720-pixel projector a row of its own would
        cost the heatmaps 30 pixels of height."""
        toolbar = QToolBar(tr_text(title))
        toolbar.setObjectName(object_name)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self._corner.layout().addWidget(toolbar)  # type: ignore[union-attr]
        self._corner.show()
        self._toolbars[toolbar] = title
        return toolbar

    def dock(self, object_name: str) -> ToolPanel | None:
        return self.findChild(ToolTab, object_name) or self.findChild(ToolDock, object_name)

    def tools(self) -> list[ToolPanel]:
        """Every tool view added, tabs and docks."""
        return [*self.findChildren(ToolTab), *self.findChildren(ToolDock)]

    def set_main_view(self, widget: QWidget, title: str) -> None:
        """The window's own view: the first tab of the central area, which cannot be closed."""
        self.tool_tabs.insertTab(0, widget, tr_text(title))
        self._main_title = title
        bar = self.tool_tabs.tabBar()
        for side in (QTabBar.ButtonPosition.RightSide, QTabBar.ButtonPosition.LeftSide):
            close = bar.tabButton(0, side)
            # An empty widget where the close button was: the tab keeps the height the others
            # have with theirs, so opening the first tool view does not make the bar taller
            # (it shrank and repainted the main view by a pixel or two, in the same frame).
            keep = None
            if close is not None:
                keep = QWidget()
                keep.setFixedSize(close.sizeHint())
            bar.setTabButton(0, side, keep)
        self.tool_tabs.setCurrentIndex(0)
        self._retranslate_tabs()

    def _tool_at(self, index: int) -> ToolTab | None:
        page = self.tool_tabs.widget(index)
        return next((t for t in self.findChildren(ToolTab) if t.is_built and t._tab_page() is page), None)

    def _close_tab(self, index: int) -> None:
        tool = self._tool_at(index)
        if tool is not None:
            tool.hide()

    def _tab_menu(self, pos: QPoint) -> None:
        bar = self.tool_tabs.tabBar()
        tool = self._tool_at(bar.tabAt(pos))
        if tool is None:
            return
        menu = QMenu(self)
        menu.addAction(translate("LabWorker", "Open in its own window"), lambda: tool.setFloating(True))
        menu.addAction(translate("LabWorker", "Close"), tool.hide)
        menu.exec(bar.mapToGlobal(pos))

    def widget(self) -> QWidget:
        return self

    def set_chrome_visible(self, visible: bool) -> None:
        """Show or hide the editing chrome around the views: menu bar, toolbars, status bar."""
        self.menuBar().setVisible(visible)
        self.statusBar().setVisible(visible)
        self._corner.setVisible(visible and bool(self._toolbars))

    # ------------------------------------------------------------------ lifecycle

    def _show_status(self, text: str, ms: int) -> None:
        self.statusBar().showMessage(text, ms)

    def add_action(
        self,
        menu: str,
        text: str,
        slot: Callable[[], object],
        *,
        shortcut: QKeySequence | str | None = None,
        tip: str = "",
    ) -> QAction:
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
        if shortcut is not None:
            self.hold_shortcut(action)
        return action

    def hold_shortcut(self, action: QAction) -> None:
        """The window holds ``action`` too: a hidden menu bar's shortcuts do not fire, and in
        presentation mode the views and tools must still open from the keyboard."""
        self.addAction(action)

    def retranslate(self) -> None:
        for name, menu in self._menus.items():
            menu.setTitle(tr_text(MENU_NAMES[name]))
        self._retranslate_tabs()
        for toolbar, title in self._toolbars.items():
            toolbar.setWindowTitle(tr_text(title))
        for action, text, tip in self._action_texts:
            action.setText(tr_text(text))
            if tip:
                action.setToolTip(tr_text(tip))
                action.setStatusTip(tr_text(tip))
        self.session.retranslate()

    def _retranslate_tabs(self) -> None:
        self.tool_tabs.setToolTip(
            translate(
                "LabWorker",
                "The main view and the views opened from the View and "
                "Tools menus; right-click a tab to give it a window of its "
                "own",
            )
        )
        if self._main_title:
            self.tool_tabs.setTabText(0, tr_text(self._main_title))
            self.tool_tabs.setTabToolTip(0, translate("MainWindow", "Inputs, settings and attention weights"))

    def closeEvent(self, event: QCloseEvent) -> None:
        super().closeEvent(event)
        if event.isAccepted():
            self.session.shutdown()
