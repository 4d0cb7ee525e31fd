"""Draw the attnviz application icon: writes resources/icons/attnviz.svg and the PNG sizes.

The icon is a tiny attention heatmap: four query rows by four key columns, each row's weight
peaking on the diagonal (bright cividis yellow), and the last key column masked - hatched grey,
exactly as the app draws a masked cell.  It is generated rather than hand-edited so that the
geometry stays on a pixel grid at every size and the PNGs can always be re-rendered from the
SVG with one command:

    python packaging/make_icon.py

Only PySide6 (QtSvg, part of PySide6-Essentials) is needed; the SVG uses just rects and
polygons, no <pattern> or <clipPath>, so every SVG renderer (QtSvg implements SVG Tiny 1.2,
desktop icon themes use librsvg) draws it the same way.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICON_DIR = ROOT / "resources" / "icons"
NAME = "attnviz"
# The freedesktop hicolor theme's usual sizes; 16-48 are what panels and menus ask for,
# 256/512 what software centres and HiDPI docks use.
SIZES: tuple[int, ...] = (16, 22, 24, 32, 48, 64, 128, 256, 512)


@dataclass(frozen=True)
class Layout:
    """Where the grid sits on a canvas of `canvas` units (1 unit = 1 px when canvas == size)."""

    canvas: int
    corner: int  # background corner radius
    origin: int  # left/top margin of the grid
    pitch: int  # cell size including the gap to the next cell
    gap: int
    pixel_hatch: bool  # hatch as whole pixels (tiny sizes) instead of anti-aliased stripes


# The master drawing, on a 256-unit canvas: exact pixels at 32, 64, 128, 256 and 512 px.
MASTER = Layout(canvas=256, corner=44, origin=32, pitch=48, gap=8, pixel_hatch=False)
# Scaled down, the master's half-pixel gaps and stripes blur into mush below 32 px, so the
# tiny sizes get their own layouts in whole pixels: no gaps (like the app's heatmap itself)
# and a one-pixel hatch.
SMALL: dict[int, Layout] = {
    16: Layout(canvas=16, corner=3, origin=2, pitch=3, gap=0, pixel_hatch=True),
    22: Layout(canvas=22, corner=4, origin=3, pitch=4, gap=0, pixel_hatch=True),
    24: Layout(canvas=24, corner=4, origin=4, pitch=4, gap=0, pixel_hatch=True),
}

BACKGROUND = "#1b1f27"  # near-black slate: the cividis cells and the grey mask both stand out
# Cividis samples (pyqtgraph's cividis map at 0.1, 0.2, ... 1.0) so the icon reads like the
# default heatmap.
CIVIDIS = {
    0.1: "#00316f",
    0.2: "#31446b",
    0.3: "#4e566c",
    0.4: "#666970",
    0.5: "#7c7b78",
    0.6: "#958f78",
    0.7: "#afa473",
    0.8: "#cbba69",
    0.9: "#e7d159",
    1.0: "#ffea46",
}
# Same colours as attnviz.ui.heatmap.colormaps.MASK_COLOR / MASK_HATCH_COLOR.
MASK = "#c8c8c8"
HATCH = "#5f5f5f"
HATCH_PERIOD = 24  # master stripe spacing along x (units)
HATCH_WIDTH = 10
PIXEL_HATCH_PERIOD = 3  # tiny sizes: every third pixel diagonal is dark

# Weight shown in each (query, key) cell; None = masked key.  Each query looks mostly at "its"
# key; the last query, whose own key is masked, falls back to the last valid one.
WEIGHTS: tuple[tuple[float | None, ...], ...] = (
    (1.0, 0.3, 0.1, None),
    (0.3, 1.0, 0.2, None),
    (0.1, 0.4, 1.0, None),
    (0.2, 0.5, 0.8, None),
)


Point = tuple[float, float]


def _clip(poly: list[Point], x0: float, y0: float, x1: float, y1: float) -> list[Point]:
    """Sutherland-Hodgman clip of a convex polygon to an axis-aligned rectangle."""

    def clip_edge(
        points: list[Point], inside: Callable[[Point], bool], cross: Callable[[Point, Point], Point]
    ) -> list[Point]:
        out: list[Point] = []
        for i, cur in enumerate(points):
            prev = points[i - 1]
            if inside(cur):
                if not inside(prev):
                    out.append(cross(prev, cur))
                out.append(cur)
            elif inside(prev):
                out.append(cross(prev, cur))
        return out

    def at_x(x: float) -> Callable[[Point, Point], Point]:
        return lambda p, q: (x, p[1] + (q[1] - p[1]) * (x - p[0]) / (q[0] - p[0]))

    def at_y(y: float) -> Callable[[Point, Point], Point]:
        return lambda p, q: (p[0] + (q[0] - p[0]) * (y - p[1]) / (q[1] - p[1]), y)

    edges: tuple[tuple[Callable[[Point], bool], Callable[[Point, Point], Point]], ...] = (
        (lambda p: p[0] >= x0, at_x(x0)),
        (lambda p: p[0] <= x1, at_x(x1)),
        (lambda p: p[1] >= y0, at_y(y0)),
        (lambda p: p[1] <= y1, at_y(y1)),
    )
    for inside, cross in edges:
        if not poly:
            break
        poly = clip_edge(poly, inside, cross)
    return poly


def _hatch(x: float, y: float, w: float, h: float) -> list[str]:
    """Diagonal stripes (like the app's mask hatching) as polygons clipped to one cell."""
    shapes: list[str] = []
    # Stripes run from bottom-left to top-right; walk their offsets across the cell.
    offset = -h
    while offset < w:
        band = [
            (x + offset, y + h),
            (x + offset + HATCH_WIDTH, y + h),
            (x + offset + HATCH_WIDTH + h, y),
            (x + offset + h, y),
        ]
        clipped = _clip(band, x, y, x + w, y + h)
        if len(clipped) >= 3:
            pts = " ".join(f"{px:g},{py:g}" for px, py in clipped)
            shapes.append(f'  <polygon points="{pts}" fill="{HATCH}"/>')
        offset += HATCH_PERIOD
    return shapes


def _pixel_hatch(x: int, y: int, w: int, h: int) -> list[str]:
    """The same stripes as whole pixels, for sizes where a 1 px anti-aliased band is grey fog."""
    return [
        f'  <rect x="{x + i}" y="{y + j}" width="1" height="1" fill="{HATCH}"/>'
        for j in range(h)
        for i in range(w)
        if (i + j) % PIXEL_HATCH_PERIOD == PIXEL_HATCH_PERIOD - 1
    ]


def build_svg(layout: Layout = MASTER) -> str:
    c = layout.canvas
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny" '
        f'width="{c}" height="{c}" viewBox="0 0 {c} {c}">',
        "  <title>attnviz</title>",
        "  <desc>An attention heatmap: queries by keys, weight on the diagonal, last key masked.</desc>",
        f'  <rect x="0" y="0" width="{c}" height="{c}" rx="{layout.corner}" ry="{layout.corner}" fill="{BACKGROUND}"/>',
    ]
    side = layout.pitch - layout.gap
    for r, row in enumerate(WEIGHTS):
        for col, weight in enumerate(row):
            x = layout.origin + col * layout.pitch
            y = layout.origin + r * layout.pitch
            fill = MASK if weight is None else CIVIDIS[weight]
            lines.append(f'  <rect x="{x}" y="{y}" width="{side}" height="{side}" fill="{fill}"/>')
            if weight is None:
                hatch = _pixel_hatch if layout.pixel_hatch else _hatch
                lines.extend(hatch(x, y, side, side))
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


def render_pngs(svg_path: Path) -> list[Path]:
    # Rendering needs no screen; without this a headless machine aborts looking for xcb.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (fonts etc.)
    written = []
    for size in SIZES:
        if size in SMALL:
            renderer = QSvgRenderer(QByteArray(build_svg(SMALL[size]).encode()))
        else:
            renderer = QSvgRenderer(str(svg_path))
        if not renderer.isValid():
            raise SystemExit(f"QSvgRenderer could not read the {size} px drawing")
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        out = ICON_DIR / f"{NAME}-{size}.png"
        if not image.save(str(out), "PNG"):
            raise SystemExit(f"could not write {out}")
        written.append(out)
    return written


def main() -> int:
    ICON_DIR.mkdir(parents=True, exist_ok=True)
    svg_path = ICON_DIR / f"{NAME}.svg"
    svg_path.write_text(build_svg(), encoding="utf-8")
    for path in [svg_path, *render_pngs(svg_path)]:
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
