"""``import attnviz`` stays cheap, and ``attnviz.capture`` is both the package and the function."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_attnviz_loads_no_torch_until_capture_is_used() -> None:
    code = (
        "import sys, attnviz, attnviz.io.capture_file\n"
        "print('torch' in sys.modules)\n"
        "capture = attnviz.capture\n"
        "import attnviz.capture.doctor  # binds the package's name again: it must stay callable\n"
        "print('torch' in sys.modules, attnviz.capture is capture, callable(attnviz.capture))\n"
        "with attnviz.capture() as cap:\n"
        "    pass\n"
        "print(type(cap).__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.split() == ["False", "True", "True", "True", "Capture"]
