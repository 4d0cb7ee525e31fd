"""Outputs that must not be written (issue 30): ``attnviz code --data`` and ``attnviz render
--out`` naming an input, a FIFO or a device are refused in one line before anything is computed,
and the input is left as it was; writes are whole or nothing (``io._atomic``)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from attnviz.cli.gui import main as cli_main
from attnviz.io.session_state import load_state_file, save_state_file

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX's")


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = cli_main(args)
    out, err = capsys.readouterr()
    return status, out, err


def run_cli_with_deadline(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    # In a thread with a deadline: a command that opened a FIFO would block for ever (the refusal
    # comes before any computation, which is why a thread will do).
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(cli_main(args)), daemon=True)
    worker.start()
    worker.join(60)
    assert result, f"attnviz {' '.join(args)} did not finish"
    out, err = capsys.readouterr()
    return result[0], out, err


def _big_session(tmp_path: Path) -> Path:
    from attnviz.bench.snippet_cases import book_state

    state = book_state(1, scoring="scaled_dot", lens_mode="1d", batch=1, n_queries=300, n_keys=300, d=250)
    path = tmp_path / "big.attnviz"
    save_state_file(path, state)
    return path


def test_code_data_naming_the_input_session_is_refused_and_the_session_kept(tmp_path, capsys) -> None:
    session = _big_session(tmp_path)
    before = session.read_bytes()
    for spelling in (session, tmp_path / "." / session.name):
        status, out, err = run_cli(["code", "--load", str(session), "--data", str(spelling)], capsys)
        assert status == 2 and out == ""
        assert err.count("\n") == 1 and "an input of this command: nothing was written" in err, err
    assert session.read_bytes() == before
    load_state_file(session)


@needs_fifo
def test_code_data_naming_a_fifo_is_refused_without_blocking(tmp_path, capsys) -> None:
    fifo = tmp_path / "inputs.npz"
    os.mkfifo(fifo)
    status, out, err = run_cli_with_deadline(
        ["code", "--load", str(_big_session(tmp_path)), "--data", str(fifo)], capsys
    )
    assert status == 2 and out == "" and "a FIFO (a named pipe), not a regular file" in err


@pytest.mark.skipif(sys.platform != "linux", reason="/dev/null as a Linux device")
def test_code_data_naming_a_device_is_refused(tmp_path, capsys) -> None:
    status, out, err = run_cli(["code", "--load", str(_big_session(tmp_path)), "--data", "/dev/null"], capsys)
    assert status == 2 and out == "" and "a device, not a regular file" in err


def test_the_data_file_is_written_whole_and_no_temporary_is_left(tmp_path, capsys) -> None:
    data = tmp_path / "inputs.npz"
    data.write_bytes(b"old")
    status, _out, err = run_cli(["code", "--load", str(_big_session(tmp_path)), "--data", str(data)], capsys)
    assert status == 0, err
    with np.load(data) as archive:
        assert archive.files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.attnviz", "inputs.npz"]


def test_render_out_naming_its_input_is_refused(tmp_path, capsys) -> None:
    weights = tmp_path / "w.npy"
    assert run_cli(["render", "--preset", "dot-toy", "--out", str(weights)], capsys)[0] == 0
    before = weights.read_bytes()
    link = tmp_path / "link.npy"
    link.symlink_to(weights)
    status, _out, err = run_cli(["render", "--load", str(weights), "--out", str(link)], capsys)
    assert status == 1 and err.count("\n") == 1 and "an input of this command" in err, err
    assert weights.read_bytes() == before


@needs_fifo
def test_render_out_naming_a_fifo_or_a_link_to_a_device_is_refused(tmp_path, capsys) -> None:
    fifo = tmp_path / "w.png"
    os.mkfifo(fifo)
    status, _out, err = run_cli_with_deadline(["render", "--preset", "dot-toy", "--out", str(fifo)], capsys)
    assert status == 1 and "a FIFO" in err
    if sys.platform == "linux":
        device = tmp_path / "null.csv"
        device.symlink_to("/dev/null")
        status, _out, err = run_cli(["render", "--preset", "dot-toy", "--out", str(device)], capsys)
        assert status == 1 and "a device" in err


@needs_fifo
@pytest.mark.parametrize("command", [["code"], ["render", "--out", "x.png"], ["doctor"]])
def test_an_input_that_is_a_fifo_is_refused_without_blocking(tmp_path, capsys, command, monkeypatch) -> None:
    # Told a capture by its first bytes: the look must not wait for a writer.
    monkeypatch.chdir(tmp_path)
    fifo = tmp_path / "in.attnviz"
    os.mkfifo(fifo)
    argv = [command[0], str(fifo)] if command[0] == "doctor" else [*command, "--load", str(fifo)]
    status, out, err = run_cli_with_deadline(argv, capsys)
    assert status in (1, 3) and out == "" and err.endswith("in.attnviz: is not a regular file\n"), err
