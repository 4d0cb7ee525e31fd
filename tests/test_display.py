"""No display, or missing xcb libraries: one line saying so and what to run instead, exit 1,
before Qt aborts the process (issue 36)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from attnviz.cli import gui as cli
from attnviz.cli.display import XCB_LIBRARIES, window_problem


def _all_load(_soname: str) -> bool:
    return True


def test_no_display_on_linux_names_render_and_xvfb() -> None:
    line = window_problem({}, "linux", _all_load)
    assert line is not None and "\n" not in line
    assert "attnviz render" in line and "xvfb-run attnviz" in line


@pytest.mark.parametrize(
    "environ, platform",
    [
        ({"DISPLAY": ":0"}, "linux"),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux"),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux"),  # chosen by hand: the user's to answer for
        ({}, "darwin"),
        ({}, "win32"),
    ],
)
def test_a_display_or_a_chosen_platform_is_no_problem(environ: dict[str, str], platform: str) -> None:
    assert window_problem(environ, platform, _all_load) is None


def test_a_missing_xcb_library_is_named_with_its_packages() -> None:
    line = window_problem({"DISPLAY": ":0"}, "linux", lambda soname: soname != "libxcb-cursor.so.0")
    assert line is not None and "\n" not in line
    assert "libxcb-cursor.so.0" in line and "apt install libxcb-cursor0" in line
    assert "dnf install xcb-util-cursor" in line and "attnviz render" in line
    # Wayland alone needs none of them.
    assert window_problem({"WAYLAND_DISPLAY": "w"}, "linux", lambda _s: False) is None


def test_readme_names_every_library_the_check_asks_for() -> None:
    readme = open(os.path.join(os.path.dirname(cli.__file__), "..", "..", "README.md"), encoding="utf-8").read()
    for _soname, deb, rpm in XCB_LIBRARIES:
        assert deb in readme and rpm in readme


def test_main_says_it_before_any_qt_application(monkeypatch, capsys) -> None:  # noqa: ANN001
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    import attnviz.ui.app.startup as startup

    def no_qt(*_args: object) -> None:
        raise AssertionError("a QApplication was made without a display")

    monkeypatch.setattr(startup, "application", no_qt)
    assert cli.main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no display" in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is for X11 systems")
def test_the_program_exits_1_with_one_line_where_qt_would_abort() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    done = subprocess.run(
        [sys.executable, "-m", "attnviz"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1, done.stderr[-500:]
    assert done.stderr.count("\n") == 1 and "xvfb-run attnviz" in done.stderr
