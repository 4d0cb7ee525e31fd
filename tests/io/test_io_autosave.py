"""One autosave per window: a live window's is never offered or touched, a gone window's is.

The windows here are child processes that claim an autosave slot and write to it, as the app's
writer thread does; "crashing" is ``kill -9``. No display is needed: this is the io layer the
window uses (tests/ui/test_autosave_recovery.py drives the recovery prompt on top of it).
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.io import Session, SessionFileError, claim_autosave, stale_autosaves
from attnviz.io.session import state_dir

ROOT = Path(__file__).resolve().parents[2]
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals")


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "state"
    monkeypatch.setenv("ATTNVIZ_STATE_DIR", str(directory))
    return directory


def work(marker: float) -> Session:
    return Session({"queries": np.full((1, 3, 2), marker)}, {"window": marker})


def marker_of(session: Session | None) -> float:
    assert session is not None
    return float(session.settings["window"])


# --- in one process ---------------------------------------------------------------------------


def test_a_window_writes_its_own_autosave_and_removes_it_on_a_clean_exit(folder: Path) -> None:
    slot = claim_autosave()
    assert slot.path.parent == folder and slot.path.name.startswith("autosave-")
    assert slot.read() is None and slot.modified() is None
    written = slot.write(work(1.0))
    assert written == slot.path and marker_of(slot.read()) == 1.0
    if sys.platform != "win32":
        assert stat.S_IMODE(written.stat().st_mode) == 0o600
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    other = claim_autosave()  # a second window of the same process
    other.write(work(2.0))
    assert other.path != slot.path
    assert stale_autosaves() == []  # both are alive
    (folder / f".{slot.path.name}.deadbeef.tmp").write_bytes(b"half a session")  # a killed write of its own
    slot.discard()
    assert not slot.held and not slot.path.exists()
    assert sorted(p.name for p in folder.iterdir()) == sorted([other.path.name, other.path.stem + ".lock"])
    slot.discard()  # twice is fine
    with pytest.raises(SessionFileError, match="no longer this window's autosave"):
        slot.write(work(3.0))
    other.discard()
    assert list(folder.iterdir()) == []


def test_a_released_slot_is_offered_once_and_a_damaged_one_is_reported_not_dropped(folder: Path) -> None:
    slot = claim_autosave()
    slot.write(work(1.0))
    slot.path.write_bytes(b"garbage")
    slot.release()  # as a crash would: the files stay, nobody holds the lock
    (found,) = stale_autosaves()
    assert found.path == slot.path and found.held
    assert stale_autosaves() == []  # held by this caller now: not offered twice
    with pytest.raises(SessionFileError):
        found.read()
    assert found.path.exists()  # the caller decides, after telling the user
    found.discard()
    assert list(folder.iterdir()) == []


def test_an_autosave_of_an_older_version_is_offered(folder: Path) -> None:
    from attnviz.io import save_session

    folder.mkdir()
    save_session(folder / "autosave.attnviz", work(7.0))  # no lock file: nobody can own it
    (found,) = stale_autosaves()
    assert marker_of(found.read()) == 7.0
    found.discard()
    assert list(folder.iterdir()) == []


def test_state_dir_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ATTNVIZ_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "attnviz"
    if sys.platform != "win32":
        monkeypatch.setenv("XDG_STATE_HOME", "relative/ignored")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        assert state_dir() == tmp_path / "home" / ".local" / "state" / "attnviz"


# --- windows in other processes -----------------------------------------------------------------

# A window: claims a slot, autosaves its work (argv[1] is its marker; "-" writes nothing), says
# where, then lives until told to quit (a clean exit removes its autosave) or killed.
WINDOW = r"""
import sys
import numpy as np
from attnviz.io import Session, claim_autosave
slot = claim_autosave()
if sys.argv[1] != "-":
    marker = float(sys.argv[1])
    slot.write(Session({"queries": np.full((1, 3, 2), marker)}, {"window": marker}))
print(slot.path, flush=True)
if sys.stdin.readline() == "quit\n":
    slot.discard()
print("bye", flush=True)
"""

# A starting window's recovery: takes the stale autosaves, prints their markers, waits for a line,
# then discards them (a restored one becomes the new window's own; here it is simply dropped).
RECOVER = r"""
import sys
from attnviz.io import stale_autosaves
found = stale_autosaves()
print(" ".join(str(slot.read().settings["window"]) for slot in found), flush=True)
sys.stdin.readline()
for slot in found:
    slot.discard()
"""


def spawn(code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )


def open_window(marker: str) -> tuple[subprocess.Popen[str], Path]:
    window = spawn(WINDOW, marker)
    assert window.stdout is not None
    return window, Path(window.stdout.readline().strip())


def crash(window: subprocess.Popen[str]) -> None:
    window.send_signal(signal.SIGKILL)
    window.wait()


def recover() -> list[float]:
    """What a new window starting now finds to recover (it then discards it)."""
    starting = spawn(RECOVER)
    assert starting.stdout is not None and starting.stdin is not None
    found = [float(x) for x in starting.stdout.readline().split()]
    starting.stdin.write("\n")
    starting.stdin.close()
    assert starting.wait() == 0
    return found


def contents(path: Path) -> tuple[bytes, float]:
    return path.read_bytes(), path.stat().st_mtime


@posix_only
def test_two_windows_killed_in_turn_each_recover_their_own_work(folder: Path) -> None:
    first, first_path = open_window("1")
    second, second_path = open_window("2")
    before = contents(second_path)
    assert recover() == []  # both alive: nothing offered, nothing touched
    assert first_path.exists() and contents(second_path) == before

    crash(first)
    assert recover() == [1.0]  # the first window's work, and only it
    assert not first_path.exists()
    assert contents(second_path) == before  # the live window's autosave is untouched

    crash(second)
    assert recover() == [2.0]
    assert list(folder.iterdir()) == []


@posix_only
def test_a_clean_exit_removes_only_its_own_autosave(folder: Path) -> None:
    leaving, leaving_path = open_window("1")
    staying, staying_path = open_window("2")
    assert leaving.stdin is not None and leaving.stdout is not None
    leaving.stdin.write("quit\n")
    leaving.stdin.flush()
    assert leaving.stdout.readline() == "bye\n" and leaving.wait() == 0
    assert not leaving_path.exists() and staying_path.exists()
    crash(staying)
    assert recover() == [2.0]


@posix_only
def test_a_window_gone_before_its_first_autosave_leaves_nothing_to_offer(folder: Path) -> None:
    window, path = open_window("-")
    assert not path.exists() and (folder / (path.stem + ".lock")).exists()
    crash(window)
    assert recover() == []
    assert list(folder.iterdir()) == []


@posix_only
def test_windows_starting_together_never_offer_the_same_autosave(folder: Path) -> None:
    for marker in ("1", "2", "3"):
        crash(open_window(marker)[0])
    starting = [spawn(RECOVER) for _ in range(4)]
    found: list[float] = []
    for child in starting:
        assert child.stdout is not None
        found += [float(x) for x in child.stdout.readline().split()]
    for child in starting:
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        assert child.wait() == 0
    assert sorted(found) == [1.0, 2.0, 3.0]  # each offered by exactly one of them
