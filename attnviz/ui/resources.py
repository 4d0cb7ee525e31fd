"""Where ``resources/`` is: next to the package in a checkout, inside it when installed from a
wheel (``attnviz/_resources``), at the bundle root in the desktop bundle."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def resource_dir() -> Path | None:
    here = Path(__file__).resolve().parents[1]  # attnviz/: this module lies in attnviz/ui/
    candidates = [here / "_resources", here.parent / "resources"]
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.insert(0, Path(bundle) / "resources")
    for candidate in candidates:
        if (candidate / "icons").is_dir():
            return candidate
    return None


def resource(*parts: str) -> Path | None:
    """A file under resources/, or None when it is not there."""
    base = resource_dir()
    if base is None:
        return None
    path = base.joinpath(*parts)
    return path if path.exists() else None
