"""A newcomer finds every command from ``attnviz --help``, and each command's ``--help`` ends with
examples to copy (issue 36)."""

from __future__ import annotations

import pytest

from attnviz.bench import __main__ as bench_main
from attnviz.bench import capture_sweep
from attnviz.cli import gui as cli

COMMANDS = ("render", "code", "doctor", "diff", "check", "bench")


def _help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        code = cli.main(argv)
        raise SystemExit(code)  # the commands return 0 after --help; the window's parser exits
    assert exc.value.code in (0, None)
    return capsys.readouterr().out


def test_top_level_help_lists_every_command_with_a_line_and_an_example(capsys) -> None:  # noqa: ANN001
    out = _help(capsys, ["--help"])
    assert tuple(name for name, _, _ in cli.COMMANDS) == COMMANDS
    for name in COMMANDS:
        lines = [line for line in out.splitlines() if line.startswith(f"  {name} ")]
        assert lines, f"{name} has no line of its own in attnviz --help"
        assert f"e.g. attnviz {name} " in out
    assert "{render,code,doctor,diff,check,bench}" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_each_commands_help_ends_with_examples(capsys, command: str) -> None:  # noqa: ANN001
    out = _help(capsys, [command, "--help"])
    tail = out.rstrip().split("\n\nexamples:\n")
    assert len(tail) == 2, f"attnviz {command} --help has no examples block"
    examples = tail[1].splitlines()
    assert examples and all(line.startswith(f"  attnviz {command} ") for line in examples)


def test_command_help_keeps_example_lines_whole_and_wraps_the_description(capsys) -> None:  # noqa: ANN001
    out = _help(capsys, ["code", "--help"])
    assert "  attnviz code --framework tensorflow --preset additive-toy > snippet.py\n" in out
    description = out.split("\n\n")[1]
    assert max(len(line) for line in description.splitlines()) <= 100


def test_bench_help_names_no_issue(capsys) -> None:  # noqa: ANN001
    with pytest.raises(SystemExit):
        bench_main.main(["--help"])
    out = capsys.readouterr().out
    assert "issue" not in out.lower() and "attnviz-bench" in out
    with pytest.raises(SystemExit):
        capture_sweep.main(["--help"])
    assert "examples:" in capsys.readouterr().out


def test_lessons_are_listed_and_opened_by_name(capsys) -> None:  # noqa: ANN001
    assert cli.main(["--list-presets"]) == 0
    out = capsys.readouterr().out
    assert "additive-toy" in out and "pitfall-zero-length" in out and "exercise-2-bilinear" in out
