"""Test-wide settings: Qt runs offscreen so the suite needs no display."""

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import configuration as hypothesis_configuration

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

# Parallel workers (pytest-xdist, one per CPU) get one torch thread each, children they start
# too: torch's own pool, a thread per CPU in every worker, oversubscribed the machine (OpenMP
# threads spinning while they wait for each other). On 2 CPUs the suite took 185-194 s, 166 s
# with this. Set before any test module imports torch; a value the user set is kept.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# The app autosaves and remembers recent files: keep tests away from the user's own.
os.environ.setdefault("ATTNVIZ_STATE_DIR", tempfile.mkdtemp(prefix="attnviz-test-"))

# Tests never write outside their temporary directories: the user's home and configuration are
# a temporary directory too, set before Qt or anything else reads them. A save dialog's start
# folder falls back to the home, Qt keeps its file dialogs' history and QSettings("attnviz",
# "attnviz") under XDG_CONFIG_HOME, caches go to XDG_CACHE_HOME; children the tests start inherit
# all of it. ``REAL_HOME`` is what the check at the end of the run compares.
REAL_HOME = Path.home()
TEST_HOME = Path(tempfile.mkdtemp(prefix="attnviz-home-"))
os.environ["HOME"] = str(TEST_HOME)
for _name, _sub in (
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
    ("XDG_CACHE_HOME", ".cache"),
):
    os.environ[_name] = str(TEST_HOME / _sub)
# Hypothesis keeps its example database and caches in ``.hypothesis`` under the working directory
# (the repository) unless told otherwise: in the run's temporary home instead.
hypothesis_configuration.set_hypothesis_home_dir(TEST_HOME / ".hypothesis")
if os.name == "nt":  # where Windows keeps what XDG_* keep elsewhere
    os.environ["USERPROFILE"] = str(TEST_HOME)
    os.environ["APPDATA"] = str(TEST_HOME / "AppData" / "Roaming")
    os.environ["LOCALAPPDATA"] = str(TEST_HOME / "AppData" / "Local")


def home_listing(home: Path) -> set[str]:
    """What the home holds, two levels deep (and three in the configuration folders, where Qt and
    applications write): what a test that wrote into it would have added."""
    found: set[str] = set()
    deeper = {".config", ".local", ".local/share", ".local/state", ".cache"}

    def walk(folder: Path, relative: str, depth: int) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            name = f"{relative}{entry.name}"
            found.add(name)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and (depth < 1 or name in deeper):
                walk(Path(entry.path), name + "/", depth + 1)

    walk(home, "", 0)
    return found


_REAL_HOME_BEFORE = home_listing(REAL_HOME)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The run fails if anything appeared in the user's real home while it ran (checked once, by
    the process that started the run; parallel workers are its children)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    added = sorted(home_listing(REAL_HOME) - _REAL_HOME_BEFORE)
    if added:
        print(f"\nThe tests wrote into the real home {REAL_HOME}: {', '.join(added[:10])}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _private_state_dir(tmp_path_factory, monkeypatch):
    """Each test gets its own autosave, recent files and window layout: a layout saved by one
    test's window (docks open, say) must not leak into the next."""
    monkeypatch.setenv("ATTNVIZ_STATE_DIR", str(tmp_path_factory.mktemp("state")))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Slow tests first (the ``slow`` mark), in their order, then the rest in theirs: parallel
    workers take tests from each other's queues, and a slow test left for the end ran alone
    while the other workers had nothing left to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
