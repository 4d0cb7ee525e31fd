"""Exports: any widget (a heatmap, a whole figure) as PNG or SVG; result arrays as CSV or .npy.

Images are produced in memory first and written with the same atomic writer as every other
attnviz file, so a failed export never leaves half a file behind and every failure is one
``ExportError`` line ("<file name>: <what is wrong>") the UI can show as it is.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QBuffer, QCoreApplication, QEvent, QIODevice, QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from attnviz.compute.attention import ViewData
from attnviz.io import save_arrays, save_csv
from attnviz.io._atomic import atomic_write
from attnviz.io.errors import AttnvizFileError, cannot_write
from attnviz.state.document import State
from attnviz.state.run import Focus
from attnviz.text.safe import printable, xml_characters
from attnviz.text.tr import QT_TRANSLATE_NOOP, message
from attnviz.ui.heatmap.weights import show_weights
from attnviz.ui.heatmap.widget import HeatmapWidget
from attnviz.ui.i18n import tr_text, translate
from attnviz.ui.theme import DARK_PLOT, plot_colors

__all__ = [
    "ARRAY_SUFFIXES",
    "EXPORTABLE",
    "IMAGE_SUFFIXES",
    "ExportError",
    "WeightsFigure",
    "build_weights_figure",
    "figure_subtitle",
    "export_heatmap",
    "export_view_arrays",
    "save_widget_image",
    "widget_png_bytes",
    "widget_svg_bytes",
]

IMAGE_SUFFIXES: tuple[str, ...] = (".png", ".svg")
ARRAY_SUFFIXES: tuple[str, ...] = (".csv", ".npy", ".npz", ".pt", ".pth", ".safetensors")
#: Which ViewData arrays can be exported, by the name used in menus and file names.
EXPORTABLE: tuple[str, ...] = (
    "weights",
    "output",
    "raw_scores",
    "scores",
    "masked_scores",
    "applied_weights",
    "mask",
)


class ExportError(AttnvizFileError):
    """An export that could not be written (unknown extension, nothing to export, disk error)."""


#: What a CSS pixel is taken to be: a figure laid out at W x H pixels prints W/96 inches wide.
SCREEN_DPI = 96


def widget_png_bytes(widget: QWidget, dpi: int | None = None) -> bytes:
    """What ``widget.grab()`` shows, as PNG bytes (works for widgets never shown on screen).

    ``dpi``: drawn with dpi/96 as many pixels a side, text and lines included (the layout is
    the same), and the PNG says that resolution, so it prints at the widget's size in inches."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if dpi is None:
        image = widget.grab().toImage()
    else:
        ratio = dpi / SCREEN_DPI
        image = QImage(
            max(1, round(widget.width() * ratio)), max(1, round(widget.height() * ratio)), QImage.Format.Format_RGB32
        )
        image.setDevicePixelRatio(ratio)
        image.fill(Qt.GlobalColor.white)
        widget.render(image)  # drawn at the image's pixel ratio: text and lines as sharp
        image.setDevicePixelRatio(1.0)
        dots_per_metre = round(dpi / 0.0254)
        image.setDotsPerMeterX(dots_per_metre)
        image.setDotsPerMeterY(dots_per_metre)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # the stubs want bytes, Qt takes a str
        raise RuntimeError("Qt could not encode the PNG")
    return bytes(buffer.data().data())


def widget_svg_bytes(widget: QWidget, *, title: str = "attnviz", description: str = "") -> bytes:
    """The widget painted into an SVG document, in logical pixels.

    Text, axes and frames become vector shapes; the heatmap cells stay embedded images (Qt marks
    them ``image-rendering="optimizeSpeed"``, so viewers scale them up with sharp cell edges).
    """
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    generator = QSvgGenerator()
    generator.setOutputDevice(buffer)
    generator.setSize(widget.size())
    generator.setViewBox(QRect(0, 0, widget.width(), widget.height()))
    # 96 dpi is what browsers and Inkscape take a CSS pixel to be: the SVG's stated size in mm
    # then matches the PNG's pixel size.
    generator.setResolution(96)
    # Both name files and calls: one printable line each (Qt writes them into the XML raw).
    generator.setTitle(printable(title))
    generator.setDescription(printable(description))
    painter = QPainter(generator)
    try:
        # The (painter, offset) overload: render(painter) alone does not exist in PySide6.
        widget.render(painter, QPoint(0, 0))
    finally:
        # A painter left active on a deleted device crashes Qt; always end it.
        painter.end()
    # Texts drawn by the widget (tokens, names) reach the XML as they are; XML 1.0 forbids
    # control characters anywhere, so whatever slipped past ``printable`` is removed here.
    document = bytes(buffer.data().data()).decode("utf-8", errors="replace")
    return xml_characters(document).encode("utf-8")


def save_widget_image(
    widget: QWidget,
    path: str | os.PathLike[str],
    *,
    title: str = "attnviz",
    description: str = "",
    dpi: int | None = None,
) -> None:
    """Save ``widget`` as PNG or SVG, chosen by the extension (``dpi``: a PNG's resolution, see
    :func:`widget_png_bytes`; an SVG is vectors). Raises :class:`ExportError`."""
    file_path = Path(path)
    suffix = file_path.suffix.lower()
    if suffix not in IMAGE_SUFFIXES:
        raise ExportError(file_path, QT_TRANSLATE_NOOP("Export", "has an unknown image extension; use .png or .svg"))
    if widget.width() <= 0 or widget.height() <= 0:
        raise ExportError(file_path, QT_TRANSLATE_NOOP("Export", "cannot be written: the picture has no size"))
    try:
        data = (
            widget_png_bytes(widget, dpi)
            if suffix == ".png"
            else widget_svg_bytes(widget, title=title, description=description)
        )
    except RuntimeError as exc:
        raise ExportError(
            file_path, message(QT_TRANSLATE_NOOP("FileErrors", "cannot be written ({error})"), error=str(exc))
        ) from exc
    _write(file_path, data)


def export_heatmap(heatmap: QWidget, path: str | os.PathLike[str]) -> None:
    """Export a ``HeatmapWidget`` (or any widget) exactly as it is drawn, as PNG or SVG."""
    title = getattr(heatmap, "_title", "") or "attnviz heatmap"
    save_widget_image(heatmap, path, title=title, description="Attention heatmap exported by attnviz")


def export_view_arrays(view: ViewData, what: str, path: str | os.PathLike[str]) -> None:
    """Export one array of a result for every batch element.

    ``what`` is one of :data:`EXPORTABLE` ("weights" (B, Q, K), "output" (B, Q, d_v), ...).
    ``.csv`` writes one commented block per batch element (see :func:`attnviz.io.save_csv`);
    ``.npy`` (and .npz, .pt, .safetensors) the whole (B, ...) array under the name ``what``.
    Raises :class:`ExportError` or :class:`attnviz.io.TensorFileError`, both one line.
    """
    file_path = Path(path)
    if what not in EXPORTABLE:
        unknown = QT_TRANSLATE_NOOP("Export", "cannot export '{what}'; choose one of {choices}")
        raise ExportError(file_path, message(unknown, what=what, choices=", ".join(EXPORTABLE)))
    suffix = file_path.suffix.lower()
    if suffix not in ARRAY_SUFFIXES:
        raise ExportError(
            file_path,
            message(
                QT_TRANSLATE_NOOP("Export", "has an unknown extension; use {choices}"),
                choices=", ".join(ARRAY_SUFFIXES),
            ),
        )
    array = np.asarray(getattr(view, what))
    if suffix == ".csv":
        save_csv(file_path, array)
    else:
        save_arrays(file_path, {what: array})


# --------------------------------------------------------------------- weights figure

#: Smallest heatmap the figure lays out (HeatmapWidget's own minimum is 480 x 200).
MIN_MAP_SIZE = (480, 200)


def _figure_style() -> str:
    # Every widget of the figure gets the plots' own background (light or dark theme): the
    # captions then read as part of one picture, and no other window colour shows through as
    # hairlines between the views when the SVG is scaled.
    colors = plot_colors()
    warn = "#ffb74d" if colors is DARK_PLOT else "#8a5300"
    return (
        f"QWidget {{ background: {colors.background}; color: {colors.foreground}; }}"
        f"QLabel#figureWarnings {{ color: {warn}; }}"
    )


@dataclass
class WeightsFigure:
    """A stack of weight heatmaps, one per batch element, with a caption; never shown on screen.

    ``widget`` is ready to grab (laid out at its final size); ``maps[i]`` shows batch element
    ``batches[i]``. Call :meth:`close` when done so the widgets are freed.
    """

    widget: QWidget
    maps: list[HeatmapWidget]
    batches: list[int]
    title: str = ""
    subtitle: str = ""

    def save(self, path: str | os.PathLike[str], dpi: int | None = None) -> None:
        """Write the figure as PNG or SVG (by extension; ``dpi`` for a PNG to print); raises
        :class:`ExportError`."""
        save_widget_image(self.widget, path, title=self.title, description=self.subtitle, dpi=dpi)

    def cell_point(self, index: int, row: int, col: int, fx: float = 0.5, fy: float = 0.5) -> QPoint:
        """Pixel (in ``widget`` coordinates) at fraction (fx, fy) inside cell (row, col) of map
        ``index``: where a test or a script finds that cell in the saved PNG."""
        heatmap = self.maps[index]
        scene_point = heatmap.plot_item.getViewBox().mapViewToScene(QPointF(col + fx, row + fy))
        view = heatmap.plot_item.scene().views()[0]
        return view.mapTo(self.widget, view.mapFromScene(scene_point))

    def close(self) -> None:
        self.widget.close()
        self.widget.deleteLater()
        # Deleted now, not when an event loop next runs: a process that draws figures without
        # one (``attnviz render`` called again and again, as the sweep's opener does) would keep
        # every figure's maps, and the capture file they view, mapped until it exits.
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


def figure_subtitle(state: State, focus: Focus = Focus()) -> str:
    """One line saying what was computed for head ``focus``: scoring, masking, lengths, causal,
    dtype and shapes."""
    s = state.settings
    head = state.head_view(focus)
    lens = {
        "none": translate("Export", "no valid lengths"),
        "1d": translate("Export", "valid lengths 1-D"),
        "2d": translate("Export", "valid lengths 2-D"),
    }.get(s.lens_mode, s.lens_mode)
    return translate(
        "Export", "scoring {scoring} · mask {mask_mode} · {lengths} · causal {causal} · {dtype} · Q {q} K {k} V {v}"
    ).format(
        scoring=s.scoring,
        mask_mode=s.mask_mode,
        lengths=lens,
        causal=head.causal or translate("Export", "off"),
        dtype=s.dtype,
        q=head.queries.shape,
        k=head.keys.shape,
        v=head.values.shape,
    ) + "".join(f" · {part}" for part in changed_settings(state, focus))


# Settings the subtitle's first part always states, or that leave the picture as it is.
_STATED = frozenset({"scoring", "mask_mode", "lens_mode", "dtype", "causal", "device"})


def changed_settings(state: State, focus: Focus = Focus()) -> list[str]:
    """Every setting that differs from its default, as "name value" (translated): a figure
    states what it was computed with beyond scoring, masking, lengths, causal and dtype."""
    from attnviz.state.settings import SETTINGS, Flag

    head = state.head_view(focus)
    parts: list[str] = []
    for setting in SETTINGS.values():
        if setting.name in _STATED:
            continue
        if setting.name == "scale":
            if head.scale is not None:
                parts.append(translate("Export", "score multiplier {value}").format(value=f"{head.scale:.4g}"))
            continue
        value = getattr(state.settings, setting.name, setting.default)
        if value == setting.default or (setting.applies is not None and not setting.applies(state.settings)):
            continue
        if isinstance(setting, Flag):
            shown = translate("Export", "on") if value else translate("Export", "off")
        elif isinstance(value, float):
            shown = f"{value:.4g}"
        else:
            shown = str(value)
        parts.append(f"{tr_text(setting.undo_name)} {shown}")
    return parts


def build_weights_figure(
    view: ViewData,
    *,
    batches: Sequence[int] | None = None,
    title: str | None = None,
    subtitle: str = "",
    colormap: str | None = None,
    size: tuple[int, int] | None = None,
    levels: Sequence[tuple[float, float]] | None = None,
) -> WeightsFigure:
    """Lay out the attention weights of ``view`` for saving: one labelled heatmap per batch
    element in ``batches`` (default all), stacked, masked cells hatched, warnings underneath.
    ``title`` defaults to "Attention weights" (in the current language). ``levels``: each map's
    colour range (default 0 to 1).

    ``size`` is the whole figure in pixels (default 720 wide, 360 per map, less when there are
    many); it must leave each map at least :data:`MIN_MAP_SIZE` (``ValueError`` otherwise).
    """
    if title is None:
        title = translate("Export", "Attention weights")
    n_batch = int(view.weights.shape[0])
    chosen = list(range(n_batch)) if batches is None else [int(b) for b in batches]
    if not chosen:
        raise ValueError(QT_TRANSLATE_NOOP("Export", "no batch element to draw"))
    for b in chosen:
        if not 0 <= b < n_batch:
            raise ValueError(
                message(
                    QT_TRANSLATE_NOOP(
                        "Export", "batch {b} is out of range: the result has {n} batch element(s), 0-{last}"
                    ),
                    b=b,
                    n=n_batch,
                    last=n_batch - 1,
                )
            )
    caption_height = 64 if subtitle else 40
    warnings_height = 22 * len(view.warnings)
    if size is None:
        per_map = 360 if len(chosen) <= 4 else 260
        size = (720, caption_height + warnings_height + per_map * len(chosen))
    width, height = size
    min_height = caption_height + warnings_height + MIN_MAP_SIZE[1] * len(chosen)
    if width < MIN_MAP_SIZE[0] or height < min_height:
        raise ValueError(
            message(
                QT_TRANSLATE_NOOP("Export", "size {size} is too small for {n} heatmap(s): at least {least}"),
                size=f"{width}x{height}",
                n=len(chosen),
                least=f"{MIN_MAP_SIZE[0]}x{min_height}",
            )
        )

    widget = QWidget()
    # Never a window on screen, even when a display exists: the figure is only grabbed.
    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    widget.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
    widget.setStyleSheet(_figure_style())
    layout = QVBoxLayout(widget)
    layout.setContentsMargins(8, 8, 8, 8)
    layout.setSpacing(4)
    title, subtitle = printable(title), printable(subtitle)  # file and call names: one line each
    heading = QLabel(f"<b>{_escape(title)}</b>" + (f"<br><small>{_escape(subtitle)}</small>" if subtitle else ""))
    heading.setTextFormat(Qt.TextFormat.RichText)
    heading.setWordWrap(True)  # a subtitle naming many settings wraps, never widens the figure
    layout.addWidget(heading)

    maps: list[HeatmapWidget] = []
    extra: dict[str, Any] = {"colormap": colormap} if colormap else {}
    for index, b in enumerate(chosen):
        heatmap = HeatmapWidget(
            title=translate("Export", "batch {b} of {n}").format(b=b, n=n_batch),
            **extra,
        )
        show_weights(heatmap, view, b, levels=(0.0, 1.0) if levels is None else levels[index])
        layout.addWidget(heatmap, 1)
        maps.append(heatmap)
    if view.warnings:
        notes = QLabel("\n".join(f"\u26a0 {tr_text(w)}" for w in view.warnings))
        notes.setObjectName("figureWarnings")
        notes.setWordWrap(True)
        layout.addWidget(notes)

    widget.resize(width, height)
    widget.show()  # lays out every child; WA_DontShowOnScreen keeps it off the screen
    QApplication.processEvents()
    return WeightsFigure(widget, maps, chosen, title, subtitle)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _write(path: Path, data: bytes) -> None:
    try:
        with atomic_write(path) as stream:
            stream.write(data)
    except OSError as exc:
        raise ExportError(path, cannot_write(exc)) from exc
