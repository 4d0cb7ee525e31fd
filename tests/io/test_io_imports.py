"""attnviz.io stays headless and cheap: importing it loads neither Qt nor torch."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_import_loads_no_qt_and_no_torch() -> None:
    code = (
        "import sys, attnviz.io, attnviz.io.session, attnviz.io.tensors\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'PySide6', 'pyqtgraph'))\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_no_qt_in_the_sources() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+(PySide\d|PyQt\d|qtpy|pyqtgraph|superqt)", re.M)
    sources = sorted((ROOT / "attnviz" / "io").glob("*.py"))
    assert len(sources) >= 5
    assert [p.name for p in sources if pattern.search(p.read_text(encoding="utf-8"))] == []
