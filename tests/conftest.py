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

# Parallel workers (pytest-xdist, one per CPU) get one torch thread each, children they start
# too: torch's own pool, a thread per CPU in every worker, oversubscribed the machine (OpenMP
# threads spinning while they wait for each other). On 2 CPUs the suite took 185-194 s, 166 s
# with this. Set before any test module imports torch; a value the user set is kept.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

# The app autosaves and remembers recent files: keep tests away from the user's own.
os.environ.setdefault("ATTNVIZ_STATE_DIR", tempfile.mkdtemp(prefix="attnviz-test-"))


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
