"""The package's layers (pyproject.toml [tool.importlinter]) hold, and a Qt import added below the
UI breaks them: import-linter reads the sources, so a lazy import inside a function counts too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "lint-imports"
    if not exe.exists():
        pytest.fail("lint-imports is missing: it is a test dependency (pip install -e '.[test]')")
    # The package under ``root`` must be the one analysed, not the installed one.
    env = {"PYTHONPATH": str(root), "PATH": str(exe.parent), "HOME": str(root)}
    return subprocess.run([str(exe), "--no-cache"], cwd=root, capture_output=True, text=True, env=env, timeout=300)


def test_the_layer_contracts_are_kept():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("attnviz/engine/devices.py", "from PySide6 import QtCore", "Everything below the UI imports no Qt"),
        ("attnviz/compute/convert.py", "def _later():\n    import pyqtgraph", "Everything below the UI imports no Qt"),
        ("attnviz/state/document.py", "from attnviz.ui import theme", "each imports only below it"),
        ("attnviz/ui/views/lessons.py", "from attnviz.ui.window.main_window import MainWindow", "Inside the UI"),
    ],
)
def test_a_forbidden_import_breaks_a_contract(tmp_path, module, line, contract):
    shutil.copytree(ROOT / "attnviz", tmp_path / "attnviz", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text() + "\n" + line + "\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout
    assert contract in " ".join(result.stdout.split()) and "BROKEN" in result.stdout
