"""Test-wide settings: Qt runs offscreen so the suite needs no display."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import tempfile

# The app autosaves and remembers recent files: keep tests away from the user's own.
os.environ.setdefault("ATTNVIZ_STATE_DIR", tempfile.mkdtemp(prefix="attnviz-test-"))
