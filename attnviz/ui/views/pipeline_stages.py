"""The pipeline's stages: one card per stage (a titled map and its note), the grid that lays them
out, and their maps made ready off the GUI thread when they are big."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFont, QResizeEvent
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QVBoxLayout, QWidget

from attnviz.compute.attention import ViewData
from attnviz.compute.jobs import Job
from attnviz.compute.pipeline import softmax_allowed
from attnviz.text.tr import QT_TRANSLATE_NOOP
from attnviz.ui.heatmap import HeatmapWidget
from attnviz.ui.heatmap.prepare import Frame, PreparedMap, prepare_map
from attnviz.ui.i18n import tr_text
from attnviz.ui.lifecycle import Retranslating

__all__ = [
    "AXES",
    "QK_STAGES",
    "PreparedStages",
    "StageCard",
    "StageGrid",
    "StagesParams",
    "prepare_stages",
    "stage_look",
    "stage_maps",
]

#: The stages drawn as (queries, keys) maps; the output is (queries, value dimension).
QK_STAGES = ("raw_scores", "scores", "modified_scores", "mask", "masked_scores", "weights", "applied_weights")
#: Each stage map's axes (marked sources: the view names them in the current language).
AXES = {
    stage: (QT_TRANSLATE_NOOP("PipelineView", "Keys"), QT_TRANSLATE_NOOP("PipelineView", "Queries"))
    for stage in QK_STAGES
} | {"output": (QT_TRANSLATE_NOOP("PipelineView", "Value dimension"), QT_TRANSLATE_NOOP("PipelineView", "Queries"))}

_FRAME_IDLE = "QFrame#stageCard { border: 2px solid transparent; border-radius: 4px; }"
_FRAME_HOT = "QFrame#stageCard { border: 2px solid #e0a800; border-radius: 4px; }"


def stage_look(stage: str, mask: np.ndarray, allowed: np.ndarray, empty: np.ndarray) -> dict:
    """How ``stage``'s map is drawn besides its values (``set_data`` / ``prepare_map`` arguments):
    the mask and the weights on 0 to 1 with the fully masked rows marked, the masked scores and
    weights greyed where the softmax gives nothing, the scores on their own range."""
    if stage == "mask":
        return {"mask": mask, "empty_rows": empty, "levels": (0.0, 1.0)}
    if stage == "masked_scores":
        return {"mask": allowed, "levels": None}
    if stage in ("weights", "applied_weights"):
        return {"mask": allowed, "empty_rows": empty, "levels": (0.0, 1.0)}
    return {"levels": None}


def stage_maps(view: ViewData, b: int, mask: np.ndarray, allowed: np.ndarray) -> dict[str, tuple[np.ndarray, dict]]:
    """Each (queries, keys) stage of batch element ``b``: its values and how they are drawn."""
    values = {
        "raw_scores": view.raw_scores[b],
        "scores": view.scores[b],
        "modified_scores": view.modified_scores[b],
        "mask": mask.astype(np.float32),
        "masked_scores": view.masked_scores[b],
        "weights": view.weights[b],
        "applied_weights": view.applied_weights[b],
    }
    empty = view.empty_rows[b]
    return {stage: (value, stage_look(stage, mask, allowed, empty)) for stage, value in values.items()}


@dataclass(frozen=True, eq=False)
class StagesParams:
    """The stage maps to prepare: of ``view``, batch element ``batch``, under ``mask_mode``."""

    view: ViewData
    batch: int
    mask_mode: str
    show_masked_values: dict[str, bool]  # each stage's heatmap's
    frames: dict[str, Frame | None]  # what each stage's heatmap has on screen


@dataclass(frozen=True, eq=False)
class PreparedStages:
    request: StagesParams
    mask: np.ndarray
    allowed: np.ndarray
    maps: dict[str, PreparedMap]


def prepare_stages(job: Job[StagesParams | None]) -> PreparedStages | None:
    """Every pass over the cells the stage maps need, for big ones. Qt-free: off the GUI thread."""
    request = job.params
    if request is None:
        return None
    b = request.batch
    mask = request.view.mask[b].astype(bool)
    allowed = softmax_allowed(mask, request.mask_mode)
    maps = {
        stage: prepare_map(
            values,
            **kwargs,
            show_masked_values=request.show_masked_values[stage],
            pyramid=True,
            frame=request.frames[stage],
        )
        for stage, (values, kwargs) in stage_maps(request.view, b, mask, allowed).items()
    }
    return PreparedStages(request, mask, allowed, maps)


class StageCard(Retranslating, QFrame):
    """One stage: its title, its heatmap and a line saying what the stage did here.

    The title is a wrapping label over the map, not the map's own title: a plot title is one
    line the plot must be as wide as, and at presentation mode's type size the plot then grew
    past its card and lost its last columns and its colour bar.
    """

    def __init__(self, stage: str, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stage = stage
        self._title = title
        self.setObjectName("stageCard")
        self.setStyleSheet(_FRAME_IDLE)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(1)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        layout.addWidget(self.title)
        self.heatmap = HeatmapWidget()
        # Seven maps share the dock: smaller than the main window's, annotations hide themselves
        # when the cells get too small for them.
        self.heatmap.setMinimumSize(300, 150)
        if stage == "mask":
            self.heatmap.value_format = ".0f"
        layout.addWidget(self.heatmap, 1)
        self.note = QLabel()
        self.note.setWordWrap(True)
        layout.addWidget(self.note)
        self.retranslate()

    def retranslate(self) -> None:
        title = tr_text(self._title)
        self.title.setText(title)
        self.heatmap.setAccessibleName(title)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and hasattr(self, "title"):
            # A font set on a child stops following the application's (presentation mode).
            font = QFont(self.font())
            font.setBold(True)
            self.title.setFont(font)
            # The frame's style sheet reaches the note too: it would keep the font it was
            # polished with.
            self.note.setFont(QFont(self.font()))

    def set_hot(self, hot: bool) -> None:
        self.setStyleSheet(_FRAME_HOT if hot else _FRAME_IDLE)


class StageGrid(QWidget):
    """The stage cards in a grid whose column count follows the width (1 in a narrow dock)."""

    #: A card narrower than this cannot show a 10-key row of weights with its numbers.
    CARD_WIDTH = 350

    def __init__(
        self, cards: list[StageCard], hidden: set[StageCard] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._cards = cards
        #: Presentation mode's type scale: larger type needs wider cards.
        self.scale = 1.0
        #: Cards left out (the score-term stage of a call without terms).
        self.hidden: set[StageCard] = set(hidden or ())
        for card in self.hidden:
            card.setHidden(True)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self.columns = 0
        self._relayout(2)

    def _relayout(self, columns: int, force: bool = False) -> None:
        shown = [card for card in self._cards if card not in self.hidden]
        columns = max(1, min(columns, len(shown)))
        if columns == self.columns and not force:
            return
        self.columns = columns
        for card in self._cards:
            self._grid.removeWidget(card)
        for i, card in enumerate(shown):
            self._grid.addWidget(card, i // columns, i % columns)
        for c in range(len(self._cards)):
            self._grid.setColumnStretch(c, 1 if c < columns else 0)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            # A card has a style sheet (its frame), and Qt's style sheets resolve a widget's font
            # when they polish it: an application font set later (presentation mode) stopped at
            # the cards, whose titles and notes stayed small if the pipeline was shown first.
            for card in self._cards:
                card.setFont(self.font())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._relayout(event.size().width() // self._card_width())

    def _card_width(self) -> int:
        return int(self.CARD_WIDTH * self.scale)

    def set_scale(self, scale: float) -> None:
        self.scale = scale
        self._relayout(self.width() // self._card_width())

    def show_card(self, card: StageCard, shown: bool) -> None:
        """Show or hide one card (the score-term stage, for calls that have terms) and lay out again."""
        if (card in self.hidden) == (not shown):
            return
        if shown:
            self.hidden.discard(card)
        else:
            self.hidden.add(card)
        card.setHidden(not shown)
        self._relayout(max(1, self.width() // self._card_width()), force=True)
