"""Tests never write outside their temporary directories: the run's HOME and Qt's settings are a
temporary folder (tests/conftest.py), and a run fails if anything appears in the real home."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import conftest

ROOT = Path(__file__).resolve().parents[1]


def test_the_home_and_qts_settings_are_a_temporary_folder(qapp):
    from PySide6.QtCore import QSettings, QStandardPaths

    home = Path.home()
    assert home == conftest.TEST_HOME != conftest.REAL_HOME
    assert home.is_relative_to(Path(tempfile.gettempdir()).resolve()) or home.is_relative_to(tempfile.gettempdir())
    assert Path("~").expanduser() == home
    for location in (
        QStandardPaths.StandardLocation.HomeLocation,
        QStandardPaths.StandardLocation.GenericConfigLocation,
        QStandardPaths.StandardLocation.AppDataLocation,
        QStandardPaths.StandardLocation.GenericCacheLocation,
    ):
        path = QStandardPaths.writableLocation(location)
        assert Path(path).is_relative_to(home), (location, path)
    for settings in (QSettings("attnviz", "attnviz"), QSettings("QtProject")):  # Qt's dialog history
        assert Path(settings.fileName()).is_relative_to(home), settings.fileName()


def _probe(tmp_path: Path, **extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The probe run by a child pytest whose HOME is an empty folder of ours."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ATTNVIZ_", "PYTEST_"))}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), **extra)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests/home_probe.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, home


@pytest.mark.slow
def test_a_run_leaves_the_real_home_untouched(tmp_path):
    done, home = _probe(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert sorted(p.name for p in home.iterdir()) == []


@pytest.mark.slow
def test_a_test_that_writes_into_the_real_home_fails_the_run(tmp_path):
    done, home = _probe(tmp_path, ATTNVIZ_HOME_PROBE_MISBEHAVE="1")
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout + done.stderr
    assert "1 passed" in done.stdout and f"The tests wrote into the real home {home}: escaped.txt" in done.stdout


def test_hypothesis_keeps_its_database_in_the_runs_home_not_the_repository():
    from hypothesis.configuration import storage_directory

    found = storage_directory("examples", intent_to_write=False)
    folder = Path(getattr(found, "path", found))  # a Path in older Hypothesis, an object holding one in newer
    assert folder.is_relative_to(conftest.TEST_HOME) and not folder.is_relative_to(ROOT), folder
