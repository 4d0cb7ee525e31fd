"""``attnviz doctor FILE``: one line per finding, exit status 1 on an error finding, 0 otherwise,
2 for a bad command line, 3 for a file that cannot be read; never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import attnviz
from attnviz.cli.doctor import doctor_main
from attnviz.io import Session, save_session

from .models import KEEP, TOKENS, TinySdpa, ids

ROOT = Path(__file__).resolve().parents[2]


def captured(tmp_path: Path, masks: list, tokens: object = TOKENS, name: str = "run.attnviz-capture") -> Path:
    model = TinySdpa()
    with attnviz.capture(model, tokens=tokens) as cap, torch.no_grad():
        model(ids(), masks)
    path = tmp_path / name
    cap.save(path)
    return path


def doctor(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    status = doctor_main(list(argv))
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err.splitlines()


def test_a_planted_bug_is_an_error_line_per_call_and_status_1(tmp_path, capsys):
    path = captured(tmp_path, [(KEEP[:, None, :, None], False)] * 3)
    status, out, err = doctor(capsys, str(path))
    assert status == 1 and err == []
    assert len(out) == 4 and out[-1].startswith("3 errors, 0 warnings in 3 calls; fidelity at most ")
    assert out[0].startswith(
        "error: call 0 (layers.0), batch 1-2, rows 2-5: attn_mask of shape (3, 1, 6, 1) varies along the queries"
    )
    assert out[2].startswith("error: call 2 (layers.2)")


def test_a_correct_model_passes_and_warnings_alone_pass(tmp_path, capsys):
    status, out, err = doctor(capsys, str(captured(tmp_path, [(KEEP[:, None, None, :], False)] * 3)))
    assert (status, err, len(out)) == (0, [], 1) and out[0].startswith("no mask problem found in 3 calls; fidelity at")
    pairs = (KEEP[:, :, None] == KEEP[:, None, :])[:, None]  # padding paired with padding: a warning
    status, out, _ = doctor(capsys, str(captured(tmp_path, [(pairs, False)] * 3)))
    assert (
        status == 0 and out[0].startswith("warning: call 0 (layers.0)") and out[-1].startswith("0 errors, 3 warnings")
    )


def test_pad_tokens_and_lengths_from_the_command_line(tmp_path, capsys):
    gpt_tokens = [[t.replace("[PAD]", "<|endoftext|>") for t in row] for row in TOKENS]
    path = captured(tmp_path, [(None, False)] * 3, tokens=gpt_tokens)
    assert doctor(capsys, str(path))[0] == 0  # padding unknown: nothing to say
    status, out, _ = doctor(capsys, str(path), "--pad-token", "<|endoftext|>")
    assert status == 1 and "real query rows attend to padding keys" in out[0]
    no_tokens = captured(tmp_path, [(None, False)] * 3, tokens=None, name="plain.attnviz-capture")
    assert doctor(capsys, str(no_tokens), "--lengths", "6,4,2")[0] == 1
    status, _, err = doctor(capsys, str(no_tokens), "--lengths", "6,4")
    assert status == 2 and err == ["attnviz doctor: lengths must have one entry per batch element (3); got shape (2,)"]
    # Issue 30: a length past the keys named no padding at all and was accepted in silence.
    for lengths, value in (("1000000000,4,2", 1000000000), ("6,4," + "9" * 40, None)):
        status, out, err = doctor(capsys, str(no_tokens), "--lengths", lengths)
        assert status == 2 and out == [] and len(err) == 1, err
        if value is None:
            assert err == ["attnviz doctor: lengths must be at most the calls' keys; one is out of any range"]
        else:
            assert err == [f"attnviz doctor: lengths must be from 0 to the keys of call 0 (6); got {value}"]


@pytest.mark.parametrize(
    "argv, words",
    [
        ((), "the following arguments are required: FILE"),
        (("x", "--lengths", "a,b"), "--lengths 'a,b': expected whole numbers"),
        (("x", "--bogus"), "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_are_status_2_in_one_line(capsys, argv, words):
    status, out, err = doctor(capsys, *argv)
    assert status == 2 and out == [] and len(err) == 1 and words in err[0] and err[0].startswith("attnviz doctor: ")


def test_bad_files_are_one_line_status_3(tmp_path, capsys):
    session = tmp_path / "work.attnviz"
    save_session(session, Session(arrays={"queries": torch.zeros(1, 2, 3).numpy()}, settings={}))
    damaged = tmp_path / "damaged.attnviz-capture"
    damaged.write_bytes(b"ATTNVIZ-CAPTURE\n" + b"\xff" * 8 + b"{")
    for path, words in (
        (session, "is not an attnviz capture"),
        (damaged, "at most"),
        (tmp_path / "missing", "does not exist"),
        (tmp_path, "is a directory"),
    ):
        status, out, err = doctor(capsys, str(path))
        assert status == 3 and out == [] and len(err) == 1 and words in err[0], err


def test_wired_into_the_attnviz_command(tmp_path):
    path = captured(tmp_path, [(KEEP[:, None, None, :].float(), False)] * 3)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LANG": "C", "LANGUAGE": "", "LC_ALL": "C"}
    result = subprocess.run(
        [sys.executable, "-m", "attnviz", "doctor", str(path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "attn_mask is a float mask of 0s and 1s" in result.stdout
    help_text = subprocess.run(
        [sys.executable, "-m", "attnviz", "doctor", "--help"], capture_output=True, text=True, env=env, timeout=120
    )
    assert help_text.returncode == 0 and "--pad-token" in help_text.stdout


def test_fidelity_per_call_and_a_threshold(tmp_path, capsys):
    path = captured(tmp_path, [(KEEP[:, None, None, :], False)] * 3)
    status, out, _ = doctor(capsys, str(path), "--calls", "--max-fidelity", "1e-5")
    assert status == 0 and len(out) == 4
    assert out[0].startswith("call 0 (layers.0): sdpa, fidelity ") and out[2].startswith("call 2 (layers.2): sdpa")
    status, out, _ = doctor(capsys, str(path), "--max-fidelity", "0")  # float32 rounding is above 0
    assert status == 1 and out[0].startswith("error: call 0 (layers.0): attnviz's recomputation differs")
    status, _, err = doctor(capsys, str(path), "--max-fidelity", "-1")
    assert status == 2 and "--max-fidelity -1.0: expected a number >= 0" in err[0]


def test_a_call_that_could_not_be_verified_is_a_warning(tmp_path, capsys):
    model = TinySdpa()
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), [(KEEP[:, None, None, :], False)] * 3)
    # As a call the capture could not recompute: never compared, the reason in its note.
    cap.calls[1]._checked = True
    cap.calls[1]._add_note("not recomputed: a mask it cannot read")
    cap.save(tmp_path / "unchecked.attnviz-capture")
    status, out, _ = doctor(capsys, str(tmp_path / "unchecked.attnviz-capture"))
    assert status == 0 and out[0].startswith("warning: call 1 (layers.1): attnviz could not check this call")
    assert "a mask it cannot read" in out[0] and out[-1].startswith("0 errors, 1 warning in 3 calls")


def test_attention_dropout_at_capture_is_an_error(tmp_path, capsys):
    """Dropout at inference (a model left in training mode) was a warning: CI stayed green."""
    model = TinySdpa()
    with attnviz.capture(model, tokens=TOKENS) as cap, torch.no_grad():
        model(ids(), [(KEEP[:, None, None, :], False)] * 3)
    cap.calls[1].dropout_p = 0.5  # as if run with dropout: its weights are random
    cap.save(tmp_path / "dropout.attnviz-capture")
    status, out, _ = doctor(capsys, str(tmp_path / "dropout.attnviz-capture"))
    assert status == 1 and out[0].startswith("error: call 1 (layers.1): attention dropout (p = 0.5) was active")
    assert "training mode" in out[0] and out[-1].startswith("1 error, 0 warnings in 3 calls")
