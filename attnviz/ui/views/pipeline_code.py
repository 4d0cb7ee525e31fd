"""The code beside the stage: the copy-as-code snippet of the result on show, read-only, with the
lines that compute one stage highlighted in the function they belong to.

The snippet is ``attnviz.snippets``' (the one Edit › Copy as code writes), in the framework the
user picked, remembered under the same setting (``copyCode/framework``), so choosing it here or
in the Edit menu is one choice. It is written off the GUI thread by the pipeline view's
computation ``make_code`` (Qt-free); the panel only shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QResizeEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QTextEdit, QVBoxLayout, QWidget

from attnviz.compute import Outcome
from attnviz.compute.jobs import Job
from attnviz.snippets import FRAMEWORK_TITLES, FRAMEWORKS, Snippet, SnippetError, generate, snippet_input
from attnviz.state.run import Focus
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.lifecycle import Retranslating
from attnviz.ui.preferences import default_settings

__all__ = [
    "DEFAULT_FRAMEWORK",
    "FRAMEWORK_KEY",
    "CodePanel",
    "CodeRequest",
    "CodeResult",
    "PythonHighlighter",
    "make_code",
    "snippet_stage",
]

#: The setting copy as code remembers its framework in (``ui.files.copy_code``), and its default.
FRAMEWORK_KEY = "copyCode/framework"
DEFAULT_FRAMEWORK = "pytorch"
#: The lines computing the stage, and the rest of their function: warm yellows, the stage's
#: the formulas' highlight (``formulas.HIGHLIGHT_BG``), the function's paler.
_STAGE_BG = "#ffd866"
_FUNCTION_BG = "#fff4cc"
_STAGE_FG = "#000000"


def snippet_stage(stage: str) -> str:
    """The snippets' name of a pipeline stage (the additive features are "hidden_features")."""
    return "hidden_features" if stage == "hidden" else stage


@dataclass(frozen=True, eq=False)
class CodeRequest:
    """The snippet to write: of ``outcome`` (the result on show, head ``focus``) in ``framework``."""

    framework: str
    outcome: Outcome
    focus: Focus


@dataclass(frozen=True, eq=False)
class CodeResult:
    request: CodeRequest
    snippet: Snippet | None = None
    #: Why no snippet could be written (a marked message), when none was.
    error: str | None = None


def make_code(job: Job[CodeRequest | None]) -> CodeResult | None:
    """The snippet of the request's result. Qt-free, never raises for what cannot be written;
    None when the request is not of the snapshot it runs on (a newer one follows)."""
    request = job.params
    if request is None or request.outcome.version != job.snapshot.version:
        return None
    try:
        inp = snippet_input(job.snapshot.state, request.outcome, focus=request.focus)
        return CodeResult(request, generate(inp, request.framework))
    except SnippetError as exc:
        return CodeResult(request, error=str(exc.args[0]))
    except (ValueError, MemoryError) as exc:
        return CodeResult(
            request,
            error=message(QT_TRANSLATE_NOOP("PipelineCode", "the code cannot be written: {error}"), error=str(exc)),
        )


def read_framework(settings: QSettings) -> str:
    chosen = settings.value(FRAMEWORK_KEY, DEFAULT_FRAMEWORK)
    return chosen if chosen in FRAMEWORKS else DEFAULT_FRAMEWORK


class PythonHighlighter(QSyntaxHighlighter):
    """Python's keywords, strings, comments and numbers, in colours that read on the panel's
    light background (every snippet is Python)."""

    _RULES = (
        (
            r"\b(def|class|return|import|from|as|if|else|elif|for|in|not|and|or|with|None|True|False|lambda|"
            r"is|while|raise|try|except|pass|yield|assert)\b",
            "#7a1fa2",
            True,
        ),
        (r"\b[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?\b", "#1c5fb0", False),
        (r"@[A-Za-z_][A-Za-z0-9_.]*", "#8a5a00", False),
        (r"(\"[^\"\n]*\"|'[^'\n]*')", "#2a7a2a", False),
        (r"#[^\n]*", "#6b6b6b", False),
    )

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._rules = []
        for pattern, color, bold in self._RULES:
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(color))
            if bold:
                fmt.setFontWeight(QFont.Weight.Bold)
            self._rules.append((re.compile(pattern), fmt))

    def highlightBlock(self, text: str) -> None:
        for pattern, fmt in self._rules:
            for match in pattern.finditer(text):
                self.setFormat(match.start(), match.end() - match.start(), fmt)


class CodePanel(Retranslating, QWidget):
    """The snippet on show (``snippet``), the lines of ``stage`` highlighted and scrolled into view,
    and the framework to write it in (``framework``; ``frameworkChosen(str)`` when the user picks
    another one here)."""

    frameworkChosen = Signal(str)

    def __init__(self, settings: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings if settings is not None else default_settings()
        self.snippet: Snippet | None = None
        self.stage: str | None = None
        self._error: str | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.framework_caption = QLabel()
        self.framework_box = QComboBox()
        for name in FRAMEWORKS:
            self.framework_box.addItem(FRAMEWORK_TITLES[name], name)
        self.framework_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.framework_caption.setBuddy(self.framework_box)
        row.addWidget(self.framework_caption)
        row.addWidget(self.framework_box)
        row.addStretch(1)
        layout.addLayout(row)
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        layout.addWidget(self.caption)
        self.editor = QPlainTextEdit()
        self.editor.setReadOnly(True)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        # Light whatever the theme: the highlighter's colours and the highlights are for it.
        self.editor.setStyleSheet("QPlainTextEdit { background: #fbfbf8; color: #1e1e1e; }")
        self._highlighter = PythonHighlighter(self.editor.document())
        layout.addWidget(self.editor, 1)
        self.set_framework(read_framework(self.settings), remember=False)
        self.framework_box.currentIndexChanged.connect(self._on_box)
        self._apply_font()
        self.retranslate()

    # ------------------------------------------------------------------ public API

    @property
    def framework(self) -> str:
        return str(self.framework_box.currentData())

    def set_framework(self, framework: str, *, remember: bool = True) -> None:
        """Show code in ``framework`` (one of ``attnviz.snippets.FRAMEWORKS``); ``remember``: as
        copy as code's choice too."""
        if framework not in FRAMEWORKS:
            raise ValueError(f"unknown framework {framework!r}: expected one of {', '.join(FRAMEWORKS)}")
        self.framework_box.blockSignals(True)
        self.framework_box.setCurrentIndex(FRAMEWORKS.index(framework))
        self.framework_box.blockSignals(False)
        if remember:
            self.settings.setValue(FRAMEWORK_KEY, framework)

    def follow_setting(self) -> bool:
        """Take the framework copy as code has now (chosen in the Edit menu meanwhile); True when
        it changed."""
        chosen = read_framework(self.settings)
        if chosen == self.framework:
            return False
        self.set_framework(chosen, remember=False)
        return True

    def show_snippet(self, snippet: Snippet | None, error: str | None = None) -> None:
        """Show ``snippet`` (or why there is none, ``error``), keeping the stage highlighted."""
        self.snippet, self._error = snippet, error
        self.editor.setPlainText(snippet.code if snippet is not None else "")
        self._highlight()

    def show_stage(self, stage: str | None) -> None:
        """Highlight the lines that compute ``stage`` (a pipeline stage, "hidden" for the additive
        features; None: none) and scroll them into view."""
        self.stage = stage
        self._highlight()

    def highlighted_lines(self) -> list[int]:
        """The line numbers (1-based) highlighted as the stage's."""
        if self.snippet is None or self.stage is None:
            return []
        spans = self.snippet.stage_spans.get(snippet_stage(self.stage), ())
        return [n for span in spans for n in range(span.first, span.last + 1)]

    # ------------------------------------------------------------------ language, fonts

    def retranslate(self) -> None:
        self.framework_caption.setText(translate("PipelineCode", "&Code in"))
        self.framework_box.setToolTip(
            translate("PipelineCode", "The framework the code is written in (the same choice as Edit › Copy as code)")
        )
        self.editor.setToolTip(
            translate(
                "PipelineCode", "The code Copy as code writes for these inputs; the stage's lines are highlighted"
            )
        )
        self._highlight()

    def changeEvent(self, event) -> None:  # noqa: ANN001 - Qt's
        super().changeEvent(event)
        if event.type() == event.Type.FontChange and hasattr(self, "editor"):
            self._apply_font()

    def _apply_font(self) -> None:
        # A fixed-width font at the widget's size: presentation mode's enlarged one included.
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(self.font().pointSizeF(), 6.0))
        self.editor.setFont(font)

    # ------------------------------------------------------------------ drawing

    def _on_box(self, _index: int) -> None:
        self.settings.setValue(FRAMEWORK_KEY, self.framework)
        self.frameworkChosen.emit(self.framework)

    def _highlight(self) -> None:
        snippet, stage = self.snippet, self.stage
        if snippet is None:
            self.caption.setText(
                tr_text(self._error) if self._error else translate("PipelineCode", "Writing the code…")
            )
            self.editor.setExtraSelections([])
            return
        spans = snippet.stage_spans.get(snippet_stage(stage), ()) if stage is not None else ()
        selections: list[QTextEdit.ExtraSelection] = []
        stage_lines = {n for span in spans for n in range(span.first, span.last + 1)}
        function_lines = {n for span in spans for n in range(span.function_lines[0], span.function_lines[1] + 1)}
        for n in sorted(function_lines - stage_lines):
            selections.append(self._line_selection(n, _FUNCTION_BG))
        for n in sorted(stage_lines):
            selections.append(self._line_selection(n, _STAGE_BG, _STAGE_FG))
        self.editor.setExtraSelections(selections)
        if stage is None:
            self.caption.setText(
                translate("PipelineCode", "Hover a stage, or walk the stages, to see the lines that compute it")
            )
            return
        if not spans:
            self.caption.setText(
                translate("PipelineCode", "No line of this {framework} code computes this stage").format(
                    framework=FRAMEWORK_TITLES[snippet.framework]
                )
            )
            return
        # A method's dotted name may break after its dots (a zero-width space): one long word
        # wider than the panel would be cut.
        where = "; ".join(
            translate("PipelineCode", "lines {first}–{last} in {function}").format(
                first=s.first, last=s.last, function=s.function.replace(".", ".\u200b")
            )
            if s.last > s.first
            else translate("PipelineCode", "line {first} in {function}").format(
                first=s.first, function=s.function.replace(".", ".\u200b")
            )
            for s in spans
        )
        self.caption.setText(translate("PipelineCode", "Computed by {where}").format(where=where))
        self.scroll_to_stage()

    def scroll_to_stage(self) -> None:
        """The stage's first lines in the middle of the panel (again once it is laid out: a panel
        not shown yet has no height to scroll in)."""
        lines = self.highlighted_lines()
        if not lines:
            return
        cursor = QTextCursor(self.editor.document().findBlockByLineNumber(lines[0] - 1))
        self.editor.setTextCursor(cursor)
        self.editor.centerCursor()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.scroll_to_stage()

    def _line_selection(self, line: int, background: str, foreground: str | None = None) -> QTextEdit.ExtraSelection:
        # One selection per line, collapsed: a full-width one paints the line's whole width.
        selection = QTextEdit.ExtraSelection()
        selection.cursor = QTextCursor(self.editor.document().findBlockByLineNumber(line - 1))
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(background))
        if foreground is not None:
            fmt.setForeground(QColor(foreground))
        fmt.setProperty(QTextFormat.Property.FullWidthSelection, True)
        selection.format = fmt
        return selection
