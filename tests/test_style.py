"""The habits the suite enforces: ruff's lint rules and format, and mypy over the package.

Each tool runs as its own process on the whole tree, with the configuration in pyproject.toml,
and its own report is the failure message, so a finding reads exactly as on the command line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: pip install -c constraints.txt -e '.[test]'")
    return found


def test_ruff_check() -> None:
    result = _run(_ruff(), "check", "--no-cache", "attnviz", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(_ruff(), "format", "--check", "--no-cache", "attnviz", "tests")
    assert result.returncode == 0, "run `ruff format attnviz tests`:\n" + result.stdout + result.stderr


@pytest.mark.slow
def test_mypy() -> None:
    # The configuration ([tool.mypy] in pyproject.toml) names the files: the whole package.
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("installed", [False, True], ids=["without IPython", "with IPython"])
def test_mypy_reads_the_same_whether_or_not_optional_packages_are_installed(tmp_path: Path, installed: bool) -> None:
    """attnviz.show imports IPython when it is there: an ignore comment for its missing import was
    unused, and an error, wherever IPython is installed (any Jupyter user's environment). IPython
    installed is stood in for by a stub package on MYPYPATH; the module that imports it is
    checked alone (its imports skipped: what is tested is that one import)."""
    env = {key: value for key, value in os.environ.items() if key != "MYPYPATH"}
    if installed:
        stub = tmp_path / "stubs" / "IPython"
        stub.mkdir(parents=True)
        (stub / "__init__.pyi").write_text("from typing import Any\n\ndef get_ipython() -> Any: ...\n")
        env["MYPYPATH"] = str(tmp_path / "stubs")
    command = (sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--follow-imports=skip")
    result = subprocess.run(
        (*command, "attnviz/cli/viewer.py"), cwd=ROOT, capture_output=True, text=True, timeout=600, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """The commands above really report findings (a check that cannot fail proves nothing)."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\ndef f(x: int) -> str:\n    return x\n")
    lint = _run(_ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), str(bad))
    assert lint.returncode != 0 and "F401" in lint.stdout
    typed = _run(
        sys.executable, "-m", "mypy", "--no-incremental", "--config-file", str(ROOT / "pyproject.toml"), str(bad)
    )
    assert typed.returncode != 0 and "Incompatible return value" in typed.stdout
