"""Every code block of README.md runs as written on a fresh install (issue 36).

Blocks run in order in one temporary folder, as a reader would paste them: Python blocks in one
namespace, bash blocks line by line (``attnviz`` is this checkout's), console blocks (``$ cmd``
followed by what it prints) compared with what the command prints. A block may be marked, in an
HTML comment just above it that the rendered README hides:

* ``<!-- readme-test: file: NAME -->``: the block is the file NAME that later blocks use;
* ``<!-- readme-test: given: q k v ... -->``: the names stand for the reader's own tensors;
* ``<!-- readme-test: needs: MODULE -->``: it needs an extra framework (the README says so next to
  it): skipped with that reason where MODULE is not installed;
* ``<!-- readme-test: skip: REASON -->``: not run here (installs, benchmarks), with the reason.

``attnviz.show`` opens no window here: it is replaced by a check that its arguments make a run.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[1]
MARK = re.compile(r"<!-- readme-test: (\w+)(?::\s*(.*?))? -->")


@dataclass
class Block:
    line: int
    language: str
    code: str
    mark: str = ""
    value: str = ""


def readme_blocks() -> list[Block]:
    blocks: list[Block] = []
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.fullmatch(r"```(\w*)", lines[i])
        if fence is None:
            i += 1
            continue
        end = lines.index("```", i + 1)
        above = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.fullmatch(above.strip())
        blocks.append(
            Block(
                i + 1,
                fence.group(1),
                "\n".join(lines[i + 1 : end]) + "\n",
                mark.group(1) if mark else "",
                (mark.group(2) or "") if mark else "",
            )
        )
        i = end + 1
    return blocks


def _is_console(block: Block) -> bool:
    return block.language == "" and block.code.startswith("$ ")


def _environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(folder)]), QT_QPA_PLATFORM="offscreen")
    env.pop("DISPLAY", None)
    return env


def _shell(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    # `attnviz` and `python` are this checkout's, whatever the PATH holds.
    python = shlex.quote(sys.executable)
    prelude = f'attnviz() {{ {python} -m attnviz "$@"; }}\npython() {{ {python} "$@"; }}\n'
    return subprocess.run(
        ["bash", "-c", prelude + command],
        cwd=folder,
        env=_environment(folder),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _given(names: str) -> dict[str, object]:
    """Tensors standing for the reader's own: (B, H, L, d) with B = 2, H = 2, L = 5, d = 4."""
    rng = np.random.default_rng(0)
    values: dict[str, object] = {}
    for name in names.split():
        if name in ("q", "k", "v"):
            values[name] = rng.standard_normal((2, 2, 5, 4)).astype(np.float32)
        elif name == "mask":
            values[name] = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
        elif name == "tokens":
            values[name] = [["a", "b", "c", "d", "e"], ["f", "g", "h", "[PAD]", "[PAD]"]]
        else:
            raise AssertionError(f"README.md: no stand-in for {name!r}")
    return values


def _checked_show(*args: object, **kwargs: object) -> object:
    """attnviz.show without a window: what it is given must make a run, as the window would."""
    from attnviz.cli.viewer import tensors_to_run
    from attnviz.compare import as_run

    kwargs.pop("block", None)
    if len(args) == 3:
        return tensors_to_run(*args, **kwargs)
    return as_run(args[0])


def _run_python(block: Block, namespace: dict[str, object], folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import attnviz

    monkeypatch.setattr(attnviz, "show", _checked_show, raising=False)
    namespace.update(_given(block.value) if block.mark == "given" else {})
    exec(compile(block.code, f"README.md:{block.line}", "exec"), namespace)  # noqa: S102 - the README's own code


def _run_console(block: Block, folder: Path) -> None:
    lines = block.code.splitlines()
    command = lines[0][2:]
    expected_status = 0
    shown = []
    for line in lines[1:]:
        status = re.search(r"\s+# exit status (\d+)$", line)
        if status:
            expected_status = int(status.group(1))
            line = line[: status.start()]
        shown.append(line.rstrip())
    done = _shell(command, folder)
    assert done.returncode == expected_status, f"README.md:{block.line}: {command}\n{done.stdout}{done.stderr}"
    # The README wraps a long line where a terminal would: the words must be the same.
    assert done.stdout.split() == " ".join(shown).split(), f"README.md:{block.line}: {command} printed\n{done.stdout}"


def _run_bash(block: Block, folder: Path) -> None:
    for line in block.code.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        done = _shell(line, folder)
        assert done.returncode == 0, f"README.md:{block.line}: {line}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"


def _run(block: Block, namespace: dict[str, object], folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.mark == "file":
        (folder / block.value).write_text(block.code, encoding="utf-8")
    elif block.language == "python":
        _run_python(block, namespace, folder, monkeypatch)
    elif block.language == "bash":
        _run_bash(block, folder)
    elif _is_console(block):
        _run_console(block, folder)


def test_the_readme_has_its_blocks_and_marks() -> None:
    blocks = readme_blocks()
    assert len(blocks) >= 10
    for block in blocks:
        assert block.mark in ("", "file", "given", "needs", "skip"), f"README.md:{block.line}: mark {block.mark!r}"
        if block.mark in ("skip", "needs", "file"):
            assert block.value, f"README.md:{block.line}: a {block.mark} mark says what"


def test_every_readme_block_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # `from tiny_gpt2 import build`, as in the folder it was saved
    namespace: dict[str, object] = {"__name__": "__readme__"}
    ran = 0
    for block in readme_blocks():
        if block.mark in ("skip", "needs"):
            continue
        if block.language not in ("python", "bash") and not _is_console(block) and block.mark != "file":
            continue  # a layout or a picture in words, not code
        _run(block, namespace, tmp_path, monkeypatch)
        ran += 1
    assert ran >= 8


@pytest.mark.parametrize(
    "block", [b for b in readme_blocks() if b.mark in ("needs", "skip")], ids=lambda b: f"README.md:{b.line}"
)
def test_blocks_that_need_more_say_what(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.mark == "skip":
        pytest.skip(f"README.md:{block.line}: {block.value}")
    if importlib.util.find_spec(block.value) is None:
        pytest.skip(f"README.md:{block.line} needs {block.value} (pip install {block.value})")
    monkeypatch.chdir(tmp_path)
    _run(block, {"__name__": "__readme__"}, tmp_path, monkeypatch)
