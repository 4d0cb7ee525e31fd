"""attnviz.io stays headless and cheap: importing it loads neither Qt nor torch."""

from __future__ import annotations

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
