"""The engine stays free of Qt, and additive attention's memory stays bounded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def test_engine_imports_no_qt():
    code = (
        "import sys, attnviz.engine; "
        "print([m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6', 'superqt', 'PyQt5', "
        "'PyQt6')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    # What the sources import (lazy imports included) is checked by the layer contracts
    # (pyproject.toml [tool.importlinter], tests/test_layers.py).


@pytest.mark.slow
def test_additive_attention_peak_memory_is_bounded():
    from attnviz.bench.memory import additive_peak_mib

    report = additive_peak_mib(n=2048, hidden=64, d=64)
    # Done at once the feature tensor alone is 1 GiB; in blocks it stays well under 512 MiB.
    assert report["peak_above_inputs_mib"] < 512, json.dumps(report)
    assert report["naive_feature_tensor_mib"] == 1024
