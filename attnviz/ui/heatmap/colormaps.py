"""Colour maps and the reserved "special" colours used by the attention heatmap.

The heatmap has to show three things that are *not* values on the colour scale: masked cells,
NaN cells and infinite cells.  They are the whole point of a debugging tool (a row of NaN is the
classic fully-masked-softmax bug), so their colours must never be confused with an ordinary
value.  This module keeps the colour maps and those reserved colours (defined in the Qt-free
``paint.py``) together so that a test can check the reserved colours against every offered map.
"""

from __future__ import annotations

import logging
from functools import cache

import numpy as np
import pyqtgraph as pg

from attnviz.text.tr import QT_TRANSLATE_NOOP, message

# The reserved colours are plain numbers, kept with the Qt-free paint code that uses them;
# re-exported here so that the maps and the colours they must stay clear of are found together.
from attnviz.ui.heatmap.paint import EMPTY_ROW_COLOR, INF_COLOR, MASK_COLOR, MASK_HATCH_COLOR, NAN_COLOR

__all__ = [
    "COLORMAPS",
    "DEFAULT_COLORMAP",
    "EMPTY_ROW_COLOR",
    "INF_COLOR",
    "MASK_COLOR",
    "MASK_HATCH_COLOR",
    "NAN_COLOR",
    "canonical_colormap_name",
    "load_colormap",
    "lookup_table",
]

_log = logging.getLogger(__name__)

# Offered colour maps, default first.  cividis is perceptually uniform *and* designed to read the
# same for the common forms of colour-vision deficiency, which matters when a bright cell means
# "this query looks at that key".
COLORMAPS: tuple[str, ...] = ("cividis", "viridis", "magma", "inferno", "plasma", "gray")
DEFAULT_COLORMAP: str = COLORMAPS[0]

# Alternative spellings people type (matplotlib calls its grey map "Greys"/"gray").
_ALIASES: dict[str, str] = {"grey": "gray", "greys": "gray"}

# pyqtgraph 0.14 bundles viridis/magma/inferno/plasma/cividis as local files (loadable without
# matplotlib) but has no file called "gray"; CET-L1 is its linear black-to-white map.
_PYQTGRAPH_FILE: dict[str, str] = {"gray": "CET-L1"}


def canonical_colormap_name(name: str) -> str:
    """Return the entry of COLORMAPS that `name` means (case-insensitive, aliases allowed).

    Raises ValueError for names that are not offered, so a typo surfaces instead of silently
    showing a different map.
    """
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in COLORMAPS:
        unknown = QT_TRANSLATE_NOOP("Colormaps", "unknown colour map {name}; choose one of {choices}")
        raise ValueError(message(unknown, name=repr(name), choices=", ".join(COLORMAPS)))
    return key


def _fallback_colormap() -> pg.ColorMap:
    # Last resort if pyqtgraph's data files are missing (stripped installs): a plain linear grey
    # map still shows the data, just less prettily.
    return pg.ColorMap(pos=[0.0, 1.0], color=[(0, 0, 0), (255, 255, 255)], name="fallback-gray")


@cache
def load_colormap(name: str) -> pg.ColorMap:
    """Load one of COLORMAPS as a pyqtgraph ColorMap, falling back gracefully if it is missing."""
    key = canonical_colormap_name(name)
    file_name = _PYQTGRAPH_FILE.get(key, key)
    try:
        cmap = pg.colormap.get(file_name)
    except (OSError, ValueError) as exc:  # file missing or unreadable
        _log.warning("colour map %r not available from pyqtgraph (%s); trying matplotlib", key, exc)
        cmap = None
    if cmap is None:
        try:
            cmap = pg.colormap.get(key, source="matplotlib")
        except Exception as exc:  # matplotlib absent or does not know the name
            _log.warning("colour map %r not available from matplotlib either (%s)", key, exc)
            cmap = None
    return cmap if cmap is not None else _fallback_colormap()


@cache
def _lookup_table_cached(key: str) -> np.ndarray:
    lut = np.asarray(load_colormap(key).getLookupTable(nPts=256, alpha=False), dtype=np.uint8)
    lut.setflags(write=False)  # shared between widgets through the cache
    return lut


def lookup_table(name: str) -> np.ndarray:
    """The 256-entry RGB uint8 lookup table (shape (256, 3)) for one of COLORMAPS."""
    return _lookup_table_cached(canonical_colormap_name(name))
