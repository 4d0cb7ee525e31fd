"""Test-wide settings: Qt runs offscreen so the suite needs no display."""

import json
import os
import tempfile
from pathlib import Path

import pytest

# Offscreen Qt, on a 1920x1080 screen (the offscreen platform's own is 800x800, smaller than a
# window the app opens on any real desktop).
_SCREEN = Path(tempfile.mkdtemp(prefix="attnviz-screen-")) / "screen.json"
_SCREEN.write_text(
    json.dumps(
        {
            "screens": [
                {
                    "name": "Test",
                    "x": 0,
                    "y": 0,
                    "width": 1920,
                    "height": 1080,
                    "logicalDpi": 96,
                    "logicalBaseDpi": 96,
                    "dpr": 1,
                }
            ]
        }
    )
)
os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={_SCREEN}")

# The app autosaves and remembers recent files: keep tests away from the user's own.
os.environ.setdefault("ATTNVIZ_STATE_DIR", tempfile.mkdtemp(prefix="attnviz-test-"))


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    """Each test gets its own autosave, recent files and window layout: a layout saved by one
    test's window (docks open, say) must not leak into the next."""
    monkeypatch.setenv("ATTNVIZ_STATE_DIR", str(tmp_path_factory.mktemp("state")))
