"""Whether the window can open here, asked before Qt is: Qt itself aborts (exit 134, "Reinstalling
the application may fix this problem") when there is no display or its xcb platform plugin misses
a system library. ``window_problem`` says why in one line, with what to run instead.

Only Linux (and other X11 systems) is checked, and only when ``QT_QPA_PLATFORM`` leaves the choice
to Qt: a platform set by hand (``offscreen``, ``wayland``, ``vnc``...) is the user's to answer for.
No Qt is imported here.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping

__all__ = ["XCB_LIBRARIES", "window_problem"]

#: What Qt's xcb plugin links against beyond libxcb itself, with the package that brings it:
#: (soname, Debian/Ubuntu package, Fedora package). README's "System libraries" lists the same.
XCB_LIBRARIES: tuple[tuple[str, str, str], ...] = (
    ("libxcb-cursor.so.0", "libxcb-cursor0", "xcb-util-cursor"),
    ("libxcb-icccm.so.4", "libxcb-icccm4", "xcb-util-wm"),
    ("libxcb-image.so.0", "libxcb-image0", "xcb-util-image"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1", "xcb-util-keysyms"),
    ("libxcb-render-util.so.0", "libxcb-render-util0", "xcb-util-renderutil"),
    ("libxcb-randr.so.0", "libxcb-randr0", "libxcb"),
    ("libxcb-shape.so.0", "libxcb-shape0", "libxcb"),
    ("libxcb-xkb.so.1", "libxcb-xkb1", "libxcb"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0", "libxkbcommon-x11"),
    ("libX11-xcb.so.1", "libx11-xcb1", "libX11-xcb"),
    ("libEGL.so.1", "libegl1", "libglvnd-egl"),
    ("libGL.so.1", "libgl1", "libglvnd-glx"),
)

INSTEAD = "attnviz render --preset additive-toy --out weights.png"


def _loads(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def window_problem(
    environ: Mapping[str, str] | None = None,
    platform: str | None = None,
    loads: Callable[[str], bool] = _loads,
) -> str | None:
    """One line saying why the window cannot open here and what to run instead, or None."""
    env = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if platform in ("darwin", "win32", "cygwin") or env.get("QT_QPA_PLATFORM"):
        return None
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        return (
            "attnviz: no display to open the window on (DISPLAY and WAYLAND_DISPLAY are unset); "
            f"without a window run `{INSTEAD}` (see attnviz --help), "
            "or open it on a virtual display: `xvfb-run attnviz`"
        )
    if env.get("WAYLAND_DISPLAY") and not env.get("DISPLAY"):
        return None  # Qt takes its Wayland plugin, which needs none of the xcb libraries
    missing = [(soname, deb, rpm) for soname, deb, rpm in XCB_LIBRARIES if not loads(soname)]
    if not missing:
        return None
    return (
        f"attnviz: the window needs system libraries that are missing: {', '.join(m[0] for m in missing)} "
        f"(Debian/Ubuntu: sudo apt install {' '.join(m[1] for m in missing)}; "
        f"Fedora: sudo dnf install {' '.join(sorted({m[2] for m in missing}))}); "
        f"without a window run `{INSTEAD}`"
    )
