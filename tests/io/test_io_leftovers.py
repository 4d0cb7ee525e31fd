"""Temporary files of interrupted saves are removed at the next save to their folder, never those
of a save still being written by a live process.

The kill test runs a child that saves sessions in a loop and SIGKILLs it at random moments
(``ATTNVIZ_KILLS`` times, 20 by default; ``python -m attnviz.bench safety`` runs 100, as issue 12
asks), through ``attnviz.bench.safety.kill_saves``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnviz.bench.safety import kill_saves
from attnviz.io import Session, load_session, save_arrays, save_session

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes and signals")

ROOT = Path(__file__).resolve().parents[2]
TEMP_NAME = re.compile(r"^\..*\.tmp$")


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TEMP_NAME.match(p.name))


def child(code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )


def dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    return gone.pid


def session(i: int) -> Session:
    return Session({"x": np.arange(500_000, dtype=np.float64) + i}, {"i": i})


def check_intact(path: Path) -> None:
    loaded = load_session(path)
    np.testing.assert_array_equal(loaded.arrays["x"], np.arange(500_000, dtype=np.float64) + loaded.settings["i"])


@pytest.mark.slow
def test_saves_killed_at_random_leave_nothing_after_the_next_save(tmp_path: Path) -> None:
    result = kill_saves(tmp_path, int(os.environ.get("ATTNVIZ_KILLS", "20")))
    print(
        f"{result.kills} kills, {result.interrupted} left a temporary file; after the next save: "
        f"{result.left_after_next_save}"
    )
    assert result.interrupted > 0  # the kills did interrupt saves: there was something to clean up
    assert result.left_after_next_save == []
    assert result.intact
    assert load_session(tmp_path / "a.attnviz").settings == {"i": -1}


HOLDER = r"""
import sys
from attnviz.io._atomic import atomic_write
with atomic_write(sys.argv[1]) as stream:
    stream.write(b"half of it")
    stream.flush()
    print("writing", flush=True)
    stream.write(sys.stdin.readline().encode())
print("done", flush=True)
"""


def test_a_save_in_progress_in_another_process_is_left_alone(tmp_path: Path) -> None:
    writer = child(HOLDER, str(tmp_path / "slow.txt"))
    assert writer.stdout is not None and writer.stdin is not None
    assert writer.stdout.readline() == "writing\n"
    (in_progress,) = temporaries(tmp_path)
    assert str(writer.pid) in in_progress  # the writer is named in its temporary file
    save_arrays(tmp_path / "other.npy", {"q": np.ones(3)})
    assert temporaries(tmp_path) == [in_progress]
    writer.stdin.write("and the rest\n")
    writer.stdin.flush()
    assert writer.stdout.readline() == "done\n"
    assert writer.wait() == 0
    assert (tmp_path / "slow.txt").read_bytes() == b"half of itand the rest\n"
    assert temporaries(tmp_path) == []


LOCKER = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()
"""


def test_a_locked_temporary_of_an_unknown_process_is_left_alone(tmp_path: Path) -> None:
    # A writer in another PID namespace (a container, a Flatpak) shows a pid this one does not
    # have; its lock on the file still tells that it is alive.
    elsewhere = tmp_path / f".work.attnviz.attnviz-{dead_pid()}-0123456789ab.tmp"
    elsewhere.write_bytes(b"being written")
    locker = child(LOCKER, str(elsewhere))
    assert locker.stdout is not None and locker.stdin is not None
    assert locker.stdout.readline() == "locked\n"
    save_session(tmp_path / "work.attnviz", session(1))
    assert elsewhere.exists()
    locker.stdin.write("\n")
    locker.stdin.flush()
    locker.wait()
    save_session(tmp_path / "work.attnviz", session(2))
    assert not elsewhere.exists()


def test_only_temporaries_of_dead_writers_are_removed(tmp_path: Path) -> None:
    dead, live = dead_pid(), os.getppid()
    leftovers = [f".a.npz.attnviz-{dead}-00000000000{i}.tmp" for i in range(3)]
    kept = [
        f".b.npz.attnviz-{live}-0123456789ab.tmp",  # the writer is alive
        ".c.npz.0123456789ab.tmp",  # no writer named: not ours to judge
        "notes.tmp",
        f".d.npz.attnviz-{dead}-xyz.tmp",
        "data.npz",
    ]
    for name in leftovers + kept:
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / f".dir.attnviz-{dead}-0123456789ab.tmp").mkdir()
    kept.append(f".dir.attnviz-{dead}-0123456789ab.tmp")
    save_arrays(tmp_path / "new.npz", {"q": np.ones(2)})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*kept, "new.npz"])


def test_long_names_still_save(tmp_path: Path) -> None:
    name = "é" * 120 + ".attnviz"  # 248 bytes: a temporary named after it in full would pass the 255 limit
    save_session(tmp_path / name, session(3))
    check_intact(tmp_path / name)
