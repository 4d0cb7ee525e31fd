"""attnviz check MODULE:FACTORY: the doctor's exit codes on a script's live model."""

from __future__ import annotations

from pathlib import Path

import pytest

from attnviz.bench.safety_outputs import HOSTILE_FACTORIES
from attnviz.cli.check import check_main

SCRIPT = """
import torch

from tests.compare.models import batch, gpt2


def correct():
    inputs = batch()
    inputs["position_ids"] = (inputs["attention_mask"].cumsum(-1) - 1).clamp(min=0)
    return gpt2(), inputs


def unadjusted_positions():
    return gpt2(), batch()


class NoCache(torch.nn.Module):
    # A wrapper whose forward takes no KV cache under any name: the kv_cache check cannot apply.

    def __init__(self):
        super().__init__()
        self.inner = gpt2()

    def forward(self, input_ids, attention_mask=None, position_ids=None):
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).logits


def no_cache():
    return NoCache(), batch()


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
    from attnviz.cli.gui import main

    assert main(["check", f"{script}:correct", "--checks", "padding"]) == 0


# The bench's hostile factories (one script for both), and a model that passes.
HOSTILE = (
    HOSTILE_FACTORIES
    + """
from tests.compare.models import batch, gpt2


def correct():
    return gpt2(), batch()
"""
)


@pytest.fixture()
def hostile(tmp_path: Path) -> Path:
    path = tmp_path / "hostile_models.py"
    path.write_text(HOSTILE)
    return path


def _line_of(script: Path, text: str) -> int:
    return next(n for n, line in enumerate(script.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("factory", "raised", "raising_line"),
    [
        ("exit_0", "SystemExit(0)", "sys.exit(0)"),
        ("exit_words", "SystemExit('msg')", 'sys.exit("msg")'),
        ("exit_none", "SystemExit(None)", "sys.exit()"),
        ("generator_exit", "GeneratorExit", "raise GeneratorExit"),
        ("odd", "Odd: odd", 'raise Odd("odd")'),
    ],
)
def test_whatever_a_factory_raises_exits_3_naming_the_factory_and_its_line(
    hostile, capsys, factory, raised, raising_line
):
    assert check_main([f"{hostile}:{factory}", "--checks", "padding"]) == 3
    out, err = capsys.readouterr()
    where = f"{hostile}:{_line_of(hostile, raising_line)}"
    assert out == ""
    assert err == f"attnviz check: the factory {hostile}:{factory} raised {raised} (at {where})\n"


@pytest.mark.parametrize(
    ("factory", "raised"), [("forward_value_error", "ValueError: bad forward"), ("forward_exit_0", "SystemExit(0)")]
)
def test_a_forward_that_raises_exits_3_naming_the_forward_and_its_line(hostile, capsys, factory, raised):
    assert check_main([f"{hostile}:{factory}", "--checks", "dtype"]) == 3
    out, err = capsys.readouterr()
    where = f"{hostile}:{_line_of(hostile, 'raise self.exc')}"
    assert out == "" and err == f"attnviz check: the model's forward raised {raised} (at {where})\n"


def test_ctrl_c_still_stops_the_command(hostile, capsys):
    assert check_main([f"{hostile}:interrupted"]) == 130
    assert capsys.readouterr().err == "attnviz check: interrupted\n"


def test_a_factory_returning_no_model_is_said_in_one_line(hostile, capsys):
    assert check_main([f"{hostile}:no_model"]) == 3
    err = capsys.readouterr().err
    assert err == (
        f"attnviz check: {hostile}:no_model returned None as the model; expected a torch.nn.Module (a callable)\n"
    )


def test_unknown_implementations_and_dtypes_are_a_bad_command_line_naming_the_known_ones(hostile, capsys):
    from attnviz.compare.invariance import implementation_names

    assert check_main([f"{hostile}:correct", "--implementations", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attnviz check: --implementations: 'nonsense' is not one of eager, ")
    assert all(name in err for name in implementation_names()) and "sdpa" in err
    assert check_main([f"{hostile}:correct", "--implementations", "eager,sdpa", "--dtypes", "int8"]) == 2
    assert capsys.readouterr().err == "attnviz check: --dtypes: 'int8' is not a floating dtype\n"


def test_a_check_that_cannot_run_is_a_warning_and_with_strict_an_error(script, capsys):
    assert check_main([f"{script}:no_cache", "--checks", "kv_cache"]) == 0
    out = capsys.readouterr().out
    # Said where the user looks, with what to change; the summary does not claim a clean run.
    assert "warning: kv_cache: not checked: NoCache.forward takes no KV-cache argument" in out
    assert "0 errors, 1 warning from kv_cache" in out
    assert check_main([f"{script}:no_cache", "--checks", "kv_cache", "--strict"]) == 1
    out = capsys.readouterr().out
    assert "error: kv_cache: not checked" in out and "1 error, 0 warnings" in out
    # --strict changes nothing where every check ran.
    assert check_main([f"{script}:correct", "--checks", "kv_cache", "--strict"]) == 0
