"""The doctor on a call's numbers (issue 22, points 4, 6, 7, 8): recorded weights that are not
probability distributions are said as such (not read as masks), scores that overflow are one
error line, and the exit status tells findings (1) from a file that cannot be read (3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import attnviz
from attnviz.capture import diagnose_run, from_output_attentions
from attnviz.cli.doctor import doctor_main
from attnviz.io import save_capture
from attnviz.state.run import AttentionCall, MaskArguments, ModelRun

from .models import TinySdpa, ids


def softmax_weights(shape: tuple[int, ...] = (2, 4, 6, 6), seed: int = 0) -> np.ndarray:
    scores = np.random.default_rng(seed).standard_normal(shape)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def weights_run(weights: np.ndarray) -> ModelRun:
    return from_output_attentions([torch.from_numpy(weights)])


def doctor(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, list[str], list[str]]:
    status = doctor_main([str(path)])
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err.splitlines()


# ----------------------------------------------------------------------------- point 7


@pytest.mark.parametrize(
    ("change", "what"),
    [
        (lambda w: np.full_like(w, -1 / 6), "negative weights"),
        (lambda w: np.where(np.arange(6) == 2, np.nan, w).astype(np.float32), "NaN or Inf among numbers"),
        (lambda w: np.where(np.arange(6) == 0, 1e37, w).astype(np.float32), "weights above 1"),
        (lambda w: (w * 3).astype(np.float32), "rows summing to 3 to 3"),
    ],
    ids=["negative", "nan", "huge", "sums"],
)
def test_weights_that_are_not_distributions_are_said_as_such(change, what: str) -> None:  # noqa: ANN001
    findings = diagnose_run(weights_run(change(softmax_weights())))
    assert [f.kind for f in findings] == ["invalid_weights"], findings
    found = findings[0]
    assert found.severity == "error" and found.count == 48 and what in found.message
    assert "48 query rows of the recorded weights are not probability distributions" in found.message
    assert found.heads == (0, 1, 2, 3) and found.batch == (0, 1) and found.rows == tuple(range(6))


def test_real_softmax_weights_and_fully_masked_rows_are_not_invalid() -> None:
    weights = softmax_weights()
    assert diagnose_run(weights_run(weights)) == []
    weights[1, :, 4] = 0.0  # SDPA's fully masked row
    weights[0, :, 5] = np.nan  # a -inf fill's fully masked row
    kinds = [f.kind for f in diagnose_run(weights_run(weights))]
    assert kinds == ["empty_rows"]
    half = softmax_weights().astype(np.float16).astype(np.float32)
    call = AttentionCall("half", None, None, None, MaskArguments(), weights=half, dtype="bfloat16")
    assert diagnose_run(ModelRun((call,), source="output_attentions")) == []


def test_an_integer_softmaxs_rows_sum_to_1_within_its_rounding() -> None:
    # I-BERT's IntSoftmax floors each weight to a multiple of 1/128 (or 1/64: its rows of 7
    # equal weights are 9/64 each, summing to 0.984), a softmax all the same. Floored weights never
    # sum to more than 1: equal weights doubled by dropout's 1 / (1 - p) are still not
    # distributions, nor are rows that lost more than a tenth.
    quantised = (np.floor(softmax_weights() * 128) / 128).astype(np.float32)
    assert float(np.abs(quantised.sum(-1) - 1).max()) > 1e-3
    assert diagnose_run(weights_run(quantised)) == []
    assert diagnose_run(weights_run(np.full((2, 4, 7, 7), 9 / 64, dtype=np.float32))) == []
    doubled = np.full((2, 4, 6, 8), 0.25, dtype=np.float32)
    assert [f.kind for f in diagnose_run(weights_run(doubled))] == ["invalid_weights"]
    lost = np.full((2, 4, 6, 8), 0.0625, dtype=np.float32)  # rows summing to 0.5
    assert [f.kind for f in diagnose_run(weights_run(lost))] == ["invalid_weights"]


def test_the_command_exits_1_on_invalid_weights(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "weights.attnviz-capture"
    save_capture(path, weights_run(np.full((2, 4, 6, 6), -1 / 6, dtype=np.float32)))
    status, out, err = doctor(capsys, path)
    assert status == 1 and err == []
    assert out[0].startswith("error: call 0 (layer 0), heads 0-3, batch 0-1, rows 0-5: 48 query rows of the recorded")
    assert not any("no key left" in line for line in out)


# ----------------------------------------------------------------------------- point 4


def overflowing(tmp_path: Path, q_value: float = 3e38, scale: float | None = None) -> Path:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 4, 3)).astype(np.float32)
    q[0, 1, 2] = q_value
    k, v = (rng.standard_normal((1, 2, 5, 3)).astype(np.float32) for _ in range(2))
    call = AttentionCall("layer 0", q, k, v, MaskArguments(), scale=scale)
    path = tmp_path / "overflow.attnviz-capture"
    save_capture(path, ModelRun((call,), source="file"))
    return path


def test_scores_that_overflow_are_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = doctor(capsys, overflowing(tmp_path))
    assert status == 1
    assert out[0].startswith(
        "error: call 0 (layer 0), heads 1, batch 0, rows 2: 5 scores overflow to Inf or NaN in float32 although the "
        "queries and keys are finite (up to 3e+38"
    ), out
    assert len(out) == 2 and out[1] == "1 error, 0 warnings in 1 call"
    status, out, _ = doctor(capsys, overflowing(tmp_path, q_value=1.0, scale=1e300))
    assert status == 1 and "scale 1e+300" in out[0] and "40 scores overflow" in out[0]
    status, out, _ = doctor(capsys, overflowing(tmp_path, q_value=1.0))
    assert status == 0 and out == ["no mask problem found in 1 call"]


def test_a_captured_model_raises_no_overflow_finding() -> None:
    model = TinySdpa()
    with attnviz.capture(model) as cap, torch.no_grad():
        model(ids(), [(None, False)] * 3)
    assert [f.kind for f in diagnose_run(cap.to_run())] == []


# ----------------------------------------------------------------------------- points 6 and 8


def test_an_unreadable_file_exits_3_not_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = overflowing(tmp_path, q_value=1.0, scale=0.125)
    raw = path.read_bytes()
    # As long as what it replaces: the header's padding and the arrays' offsets stay valid.
    assert raw.count(b'"scale":0.125') == 1
    path.write_bytes(raw.replace(b'"scale":0.125', b'"scale":1e400'))
    status, out, err = doctor(capsys, path)
    assert status == 3 and out == [] and len(err) == 1
    assert err[0] == (
        "attnviz doctor: overflow.attnviz-capture: has a damaged capture header: 1e400 is not a number JSON allows"
    )
    status, _, err = doctor(capsys, tmp_path / "missing.attnviz-capture")
    assert status == 3 and "does not exist" in err[0]
