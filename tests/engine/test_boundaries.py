"""The engine stays free of Qt, and additive attention's memory stays bounded."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

ENGINE = pathlib.Path(__file__).resolve().parents[2] / "attnviz" / "engine"


def test_engine_imports_no_qt():
    code = (
        "import sys, attnviz.engine; "
        "print([m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6', 'superqt', 'PyQt5', 'PyQt6')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    for source in ENGINE.rglob("*.py"):
        text = source.read_text()
        for name in ("PySide6", "pyqtgraph", "QtCore", "QtWidgets", "superqt"):
            assert name not in text, f"{source.name} mentions {name}"


@pytest.mark.slow
def test_additive_attention_peak_memory_is_bounded():
    from attnviz.bench.memory import additive_peak_mib

    report = additive_peak_mib(n=2048, hidden=64, d=64)
    # Done at once the feature tensor alone is 1 GiB; in blocks it stays well under 512 MiB.
    assert report["peak_above_inputs_mib"] < 512, json.dumps(report)
    assert report["naive_feature_tensor_mib"] == 1024
