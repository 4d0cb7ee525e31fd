"""Test-wide settings: Qt runs offscreen so the suite needs no display."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import tempfile

# The app autosaves and remembers recent files: keep tests away from the user's own.
os.environ.setdefault("ATTNVIZ_STATE_DIR", tempfile.mkdtemp(prefix="attnviz-test-"))

import pytest


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    """Each test gets its own autosave, recent files and window layout: a layout saved by one
    test's window (docks open, say) must not leak into the next."""
    monkeypatch.setenv("ATTNVIZ_STATE_DIR", str(tmp_path_factory.mktemp("state")))
