"""attnviz check MODULE:FACTORY: the doctor's exit codes on a script's live model."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnviz.check_cli import check_main

SCRIPT = """
from tests.compare.models import batch, gpt2


def correct():
    inputs = batch()
    inputs["position_ids"] = (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)
    return gpt2(), inputs


def unadjusted_positions():
    return gpt2(), batch()


def broken():
    raise RuntimeError("no weights here")


def wrong():
    return 3
"""


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "models_for_check.py"
    path.write_text(SCRIPT)
    return path


def test_a_correct_model_passes_and_a_planted_bug_fails(script, capsys):
    assert check_main([f"{script}:correct", "--checks", "padding,kv_cache"]) == 0
    assert "0 errors" in capsys.readouterr().out
    assert check_main([f"{script}:unadjusted_positions", "--checks", "padding"]) == 1
    out = capsys.readouterr().out
    assert "error: call 0 (transformer.h.0.attn)" in out and "position_ids" in out


def test_usage_and_models_that_cannot_be_had(script, capsys):
    assert check_main(["nocolon"]) == 2
    assert check_main([f"{script}:correct", "--checks", "speed"]) == 2
    assert check_main([f"{script}:missing"]) == 3
    assert check_main([f"{script}:broken"]) == 3
    assert check_main([f"{script}:wrong"]) == 3
    assert check_main(["no.such.module:factory"]) == 3
    assert check_main([f"{script.parent / 'absent.py'}:f"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 7
    assert "no weights here" in err


def test_the_attnviz_command_dispatches_check(script):
    from attnviz.cli import main

    assert main(["check", f"{script}:correct", "--checks", "padding"]) == 0
