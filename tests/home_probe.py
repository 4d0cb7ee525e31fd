"""Run by tests/test_home.py in a child pytest whose HOME is a folder of its own: does what the
suite's tests do with the home (a save dialog's start folder, Qt's settings and file-dialog
history, ``~`` expanded), so the parent can see that none of it lands in that HOME. Its name
keeps it out of the suite's own collection."""

from __future__ import annotations

import os
from pathlib import Path

from tests import conftest


def test_what_tests_do_with_the_home(qapp):
    from PySide6.QtCore import QSettings

    Path(Path.home(), "switch.attnviz").write_text("x")  # start_dir()'s fallback
    Path("~/expanded.txt").expanduser().write_text("x")
    for settings in (QSettings("attnviz", "attnviz"), QSettings("QtProject")):
        settings.setValue("probe", 1)
        settings.sync()
        assert settings.status() == QSettings.Status.NoError
    if os.environ.get("ATTNVIZ_HOME_PROBE_MISBEHAVE"):  # a test that escapes: the run must fail
        (conftest.REAL_HOME / "escaped.txt").write_text("x")
