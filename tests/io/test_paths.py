"""What a path is, decided before anything opens it: network and device paths by each platform's
rules (``paths.network_path``), and outputs that must not be written (``paths.check_output``,
which every atomic write runs)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from attnviz.io._atomic import atomic_write
from attnviz.io.paths import OutputRefused, check_output, network_path

# Refused on both platforms: a session travels, and each of these reaches a server or a device
# on Windows (ntpath's UNC and device rules, and the NT object namespace \??\).
EVERYWHERE = [
    "\\\\host\\share\\x.attnviz-capture",
    "//host/share/x.attnviz-capture",
    "/\\host\\share\\x.attnviz-capture",
    "\\/host/share/x.attnviz-capture",
    "\\??\\UNC\\host\\share\\x.attnviz-capture",
    "\\\\?\\UNC\\host\\share\\x.attnviz-capture",
    "\\\\.\\PhysicalDrive0",
    "\\\\.\\pipe\\name",
    "\\\\?\\C:\\x.attnviz-capture",
]
LOCAL = ["/home/me/x.attnviz-capture", "runs/x.attnviz-capture", "x.attnviz-capture", "C:\\runs\\x", "C:/runs/x"]


@pytest.mark.parametrize("path", EVERYWHERE)
@pytest.mark.parametrize("windows", [True, False])
def test_every_spelling_of_a_share_or_a_device_is_a_network_path(path: str, windows: bool) -> None:
    assert network_path(path, windows=windows)


@pytest.mark.parametrize("path", LOCAL)
@pytest.mark.parametrize("windows", [True, False])
def test_local_paths_are_not(path: str, windows: bool) -> None:
    assert not network_path(path, windows=windows)


def test_three_slashes_are_the_root_on_posix_and_a_share_on_windows() -> None:
    # POSIX: more than two leading slashes are one; Windows still finds a server after them.
    assert not network_path("///host/share/x", windows=False)
    assert network_path("///host/share/x", windows=True)
    # A POSIX folder named ?? is local there (only a backslash makes it Windows' namespace).
    assert not network_path("/??/UNC/host/share", windows=False)
    assert network_path("/??/UNC/host/share", windows=True)


def test_the_default_is_this_platform() -> None:
    assert network_path("///host/share") == (os.name == "nt")


def _refusal(path: Path, inputs: tuple[Path, ...] = ()) -> str:
    with pytest.raises(OutputRefused) as info:
        check_output(path, inputs)
    text = str(info.value.strerror)
    assert "\n" not in text
    return text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX's")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    done: list[str] = []
    # Run in a thread: a check that opened the FIFO would block forever, and the join's timeout
    # makes that a failure rather than a hung suite.
    worker = threading.Thread(target=lambda: done.append(_refusal(fifo)), daemon=True)
    worker.start()
    worker.join(5)
    assert done and "a FIFO" in done[0]
    with pytest.raises(OutputRefused), atomic_write(fifo) as stream:
        stream.write(b"x")
    assert fifo.exists() and not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


@pytest.mark.skipif(sys.platform != "linux", reason="/dev/null as a Linux device")
def test_a_device_and_a_folder_are_refused(tmp_path: Path) -> None:
    assert "a device" in _refusal(Path("/dev/null"))
    assert "a folder" in _refusal(tmp_path)


def test_an_input_is_refused_however_it_is_spelled(tmp_path: Path) -> None:
    source = tmp_path / "work.attnviz"
    source.write_bytes(b"session")
    (tmp_path / "sub").mkdir()
    assert "an input of this command" in _refusal(tmp_path / "sub" / ".." / "work.attnviz", (source,))
    link = tmp_path / "link.attnviz"
    link.symlink_to(source)
    assert "an input of this command" in _refusal(link, (source,))
    with pytest.raises(OutputRefused), atomic_write(link, inputs=(source,)) as stream:
        stream.write(b"other")
    assert source.read_bytes() == b"session"


def test_a_loop_of_links_is_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert "cannot be used" in _refusal(loop)


def test_a_new_file_or_a_regular_one_is_written(tmp_path: Path) -> None:
    source = tmp_path / "in.attnviz"
    source.write_bytes(b"in")
    for target in (tmp_path / "new.npz", source.with_name("old.npz")):
        check_output(target, (source, None))
        with atomic_write(target, inputs=(source,)) as stream:
            stream.write(b"out")
        assert target.read_bytes() == b"out"
    check_output(tmp_path / "old.npz", (tmp_path / "missing",))
