"""How a tool view joins the main window as a dock: one way for the labs, lessons and teaching views.

``add_tool_dock`` puts a view in a hidden QDockWidget, tabbed with the docks already in its
area, with a toggle (text, shortcut, tooltip) in one of the window's menus. The first time the
dock is shown it gets a useful share of the window; showing it from the menu brings its tab to
the front; a view with ``set_font_scale`` follows presentation mode.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractButton, QDockWidget, QMainWindow, QWidget

from attnviz.ui.i18n import translate
from attnviz.ui.heatmap.widget import PRESENTATION_SCALE

__all__ = ["add_tool_dock"]


def add_tool_dock(
    window: QMainWindow,
    widget: QWidget,
    *,
    title: str,
    object_name: str,
    action_text: str,
    shortcut: str | None,
    tip: str,
    area: Qt.DockWidgetArea = Qt.DockWidgetArea.BottomDockWidgetArea,
    menu_name: str = "tools_menu",
) -> QDockWidget:
    """``widget`` in a hidden dock, tabbed with the docks already in ``area``; its toggle goes to
    ``window.<menu_name>`` with ``shortcut`` and ``tip``."""
    dock = QDockWidget(title, window)
    dock.setObjectName(object_name)  # saveState/restoreState and findChild find docks by it
    dock.setWidget(widget)
    dock.setAllowedAreas(Qt.DockWidgetArea.AllDockWidgetAreas)
    # The title bar's own buttons come without tooltips; every control of the app has one.
    name = title.split(":")[0]
    close_tip = (translate("LabWorker", "Close {name} (it stays in the View menu)") if menu_name == "view_menu"
                 else translate("LabWorker", "Close {name} (it stays in the Tools menu)")).format(name=name)
    tips = {"qt_dockwidget_closebutton": close_tip,
            "qt_dockwidget_floatbutton": translate("LabWorker", "Undock into its own window, or dock it back")}
    for button in dock.findChildren(QAbstractButton):
        if button.objectName() in tips:
            button.setToolTip(tips[button.objectName()])
    others = [d for d in window.findChildren(QDockWidget) if d is not dock and window.dockWidgetArea(d) == area]
    window.addDockWidget(area, dock)
    if others:
        window.tabifyDockWidget(others[-1], dock)
    dock.hide()

    def grow_once(visible: bool) -> None:
        # A dock opens at its minimum size; the first time, give it a useful share of the window,
        # as much as the centre can spare (afterwards the user's choice stands).
        if not visible or dock.isFloating() or dock.property("grown"):
            return
        dock.setProperty("grown", True)
        if area in (Qt.DockWidgetArea.BottomDockWidgetArea, Qt.DockWidgetArea.TopDockWidgetArea):
            central = window.centralWidget()
            spare = window.height() - (central.minimumSizeHint().height() if central is not None else 0) - 60
            window.resizeDocks([dock], [max(260, min(spare, int(window.height() * 0.45)))], Qt.Orientation.Vertical)
        else:
            window.resizeDocks([dock], [max(320, int(window.width() * 0.3))], Qt.Orientation.Horizontal)

    dock.visibilityChanged.connect(grow_once)
    # Presentation mode enlarges the main heatmaps' text; a view that can scale its own follows.
    presentation = getattr(window, "presentation_action", None)
    scale = getattr(widget, "set_font_scale", None)
    if presentation is not None and callable(scale):
        presentation.toggled.connect(lambda on: scale(PRESENTATION_SCALE if on else 1.0))
    action = dock.toggleViewAction()
    action.setText(action_text)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    action.setToolTip(tip)
    action.setStatusTip(tip)
    # Tabbed behind another dock, "show" must also bring the tab to the front.
    action.triggered.connect(lambda checked: dock.raise_() if checked else None)
    menu = getattr(window, menu_name, None)
    if menu is not None:
        menu.addAction(action)
        menu.setToolTipsVisible(True)
    return dock
