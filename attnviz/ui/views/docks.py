"""Where each view joins the window: its tab or dock, menu entry, tip and shortcut, in one table.

Each view module installs its view with its entry here (``install_<view>(session, host)`` is
``host.add_dock(DOCKS[...], build)``), so the views' places, names and shortcuts are read in
one place: the menus list them, and a keyboard map or a presenter's bar can too.
"""

from __future__ import annotations

from PySide6.QtCore import Qt

from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.app.host import DockSpec

__all__ = [
    "COMPARE_DOCK",
    "DOCKS",
    "DOCTOR_DOCK",
    "HEADS_DOCK",
    "LESSON_DOCK",
    "LONG_DOCK",
    "MASKING_LAB_DOCK",
    "OVERVIEW_DOCK",
    "PIPELINE_DOCK",
    "RUN_COMPARE_DOCK",
    "SCALING_LAB_DOCK",
    "TOKENS_DOCK",
]

# The object names (QSettings keeps the open tabs and docks by them: never rename one).
PIPELINE_DOCK = "pipelineDock"
COMPARE_DOCK = "compareDock"
MASKING_LAB_DOCK = "maskingLabDock"
SCALING_LAB_DOCK = "scalingLabDock"
LESSON_DOCK = "lessonDock"
HEADS_DOCK = "heads"
OVERVIEW_DOCK = "model_overview"
TOKENS_DOCK = "tokens"
LONG_DOCK = "long_context"
DOCTOR_DOCK = "doctor"
RUN_COMPARE_DOCK = "runCompare"

_VIEWS = "view"

#: Every view's entry, by object name, in menu order.
DOCKS: dict[str, DockSpec] = {
    spec.object_name: spec
    for spec in (
        # Teaching views are wide (seven stages, or three maps side by side): tabs of the central area.
        DockSpec(
            PIPELINE_DOCK,
            QT_TRANSLATE_NOOP("TeachingDocks", "Pipeline: every stage"),
            QT_TRANSLATE_NOOP("TeachingDocks", "&Pipeline view"),
            QT_TRANSLATE_NOOP("TeachingDocks", "Every stage of the computation, with the chapter's formulas"),
            shortcut="Ctrl+Shift+P",
            menu=_VIEWS,
        ),
        DockSpec(
            COMPARE_DOCK,
            QT_TRANSLATE_NOOP("TeachingDocks", "Side by side: A vs B"),
            QT_TRANSLATE_NOOP("TeachingDocks", "&Side by side (A vs B)"),
            QT_TRANSLATE_NOOP(
                "TeachingDocks", "The same inputs under two configurations, and where their weights differ"
            ),
            shortcut="Ctrl+Shift+D",
            menu=_VIEWS,
        ),
        DockSpec(
            MASKING_LAB_DOCK,
            QT_TRANSLATE_NOOP("MaskingLab", "Masking lab: every convention"),
            QT_TRANSLATE_NOOP("MaskingLab", "&Masking lab"),
            QT_TRANSLATE_NOOP(
                "MaskingLab",
                "The current input under every masking convention (book, strict, -inf, SDPA "
                "and common bugs), with the weights that differ outlined and explained",
            ),
            shortcut="Ctrl+Shift+M",
        ),
        DockSpec(
            SCALING_LAB_DOCK,
            QT_TRANSLATE_NOOP("ScalingLab", "Scaling lab: why divide by √d"),
            QT_TRANSLATE_NOOP("ScalingLab", "&Scaling lab"),
            QT_TRANSLATE_NOOP(
                "ScalingLab",
                "Variance, softmax entropy, largest weight and gradient against d, scaled and "
                "unscaled, with the current inputs marked; tanh saturation for additive "
                "attention",
            ),
            shortcut="Ctrl+Shift+L",
        ),
        # A narrow companion of the main view: a dock beside it.
        DockSpec(
            LESSON_DOCK,
            QT_TRANSLATE_NOOP("Lessons", "Lesson"),
            QT_TRANSLATE_NOOP("Lessons", "&Lesson"),
            QT_TRANSLATE_NOOP("Lessons", "The question of the lesson loaded from Presets › Pitfalls or Exercises"),
            area=Qt.DockWidgetArea.RightDockWidgetArea,
            placement="dock",
        ),
        DockSpec(
            HEADS_DOCK,
            QT_TRANSLATE_NOOP("ModelDocks", "Heads: every head of the layer"),
            QT_TRANSLATE_NOOP("ModelDocks", "&Heads"),
            QT_TRANSLATE_NOOP(
                "ModelDocks", "Every head of the model's layer on show, side by side with one colour scale"
            ),
            shortcut="Ctrl+Shift+H",
            menu=_VIEWS,
        ),
        DockSpec(
            OVERVIEW_DOCK,
            QT_TRANSLATE_NOOP("ModelDocks", "Layers × heads: a statistic of every head"),
            QT_TRANSLATE_NOOP("ModelDocks", "&Layers × heads"),
            QT_TRANSLATE_NOOP(
                "ModelDocks", "Every head of every layer at a glance, coloured by a statistic; click one to show it"
            ),
            shortcut="Ctrl+Shift+O",
            menu=_VIEWS,
        ),
        DockSpec(
            TOKENS_DOCK,
            QT_TRANSLATE_NOOP("ModelDocks", "Tokens: attention sent and received"),
            QT_TRANSLATE_NOOP("ModelDocks", "&Tokens"),
            QT_TRANSLATE_NOOP(
                "ModelDocks",
                "Select tokens to see the attention they send and receive, and the keys a query looks at most",
            ),
            shortcut="Ctrl+Shift+T",
            menu=_VIEWS,
        ),
        DockSpec(
            LONG_DOCK,
            QT_TRANSLATE_NOOP("ModelDocks", "Long context: overview and exact tiles"),
            QT_TRANSLATE_NOOP("ModelDocks", "Lon&g context"),
            QT_TRANSLATE_NOOP(
                "ModelDocks", "The whole attention of a long input in bins, never held at once; click for exact values"
            ),
            shortcut="Ctrl+Shift+G",
            menu=_VIEWS,
        ),
        DockSpec(
            DOCTOR_DOCK,
            QT_TRANSLATE_NOOP("ModelDocks", "Mask doctor: what is wrong with the masks"),
            QT_TRANSLATE_NOOP("ModelDocks", "Mask &doctor"),
            QT_TRANSLATE_NOOP(
                "ModelDocks",
                "Every problem in the masks the model's attention calls received, each a click away from its cells",
            ),
            shortcut="Ctrl+Shift+K",
            menu=_VIEWS,
        ),
        DockSpec(
            RUN_COMPARE_DOCK,
            QT_TRANSLATE_NOOP("RunCompare", "Compare runs: where two runs differ"),
            QT_TRANSLATE_NOOP("RunCompare", "Compare &runs"),
            QT_TRANSLATE_NOOP(
                "RunCompare",
                "Two runs of a model call by call: a layers × heads map of their differences, a head's maps and "
                "their difference; with a live model, what an edited mask or an ablated head changes in the output",
            ),
            shortcut="Ctrl+Shift+R",
            menu=_VIEWS,
        ),
    )
}
