"""``python -m attnviz.bench snippets``: every framework's snippet, run in that framework, against the app.

Each framework is installed into a virtual environment of its own under a temporary directory
(``--venvs DIR`` keeps and reuses them): TensorFlow (``tensorflow-cpu``), JAX (``jax``) and
MXNet (``mxnet==1.9.1`` with ``numpy<1.24``, which it needs); PyTorch runs in this interpreter.
MXNet 1.9.1 is the last release and its wheel is tagged ``py3-none``; when it cannot be
installed or imported with this Python, the other Pythons found on this machine are tried in
turn, and what happened with each is printed.

For every case of ``attnviz.bench.snippet_cases`` the snippet is written to a file and run in the
framework's environment by ``attnviz/snippets/harness.py`` (copied there: it needs only numpy),
which records the value of each stage where the snippet's stage lines say it is computed; the
weights, the output, what ``--save-weights`` wrote and every stage are then compared with what
``compute.run_state`` shows. The table gives, per case and framework, the largest difference of
the weights and the largest one of any stage (relative to max(1, |value|)); a case marked ``*``
is beyond its dtype's tolerance (``parity.TOLERANCE``: 1e-6 in float32, for the weights, the
weights after dropout and the output; ten times it for the stages before them, whose sums the
framework may take in another order), ``L`` says the snippet leaves something out (said at its
top and below the table).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnviz.bench.snippet_cases import CASES
from attnviz.compute import run_state
from attnviz.snippets import FRAMEWORK_TITLES, Snippet, generate, snippet_input
from attnviz.snippets import harness as harness_module
from attnviz.snippets.parity import STAGE_TOLERANCE, TOLERANCE, differences, reference_stages, spans_json

__all__ = ["FRAMEWORK_PACKAGES", "run"]

#: What each framework's environment gets (pip requirements), in order of preference: the next
#: line is tried when one fails.
FRAMEWORK_PACKAGES: dict[str, list[list[str]]] = {
    "tensorflow": [["tensorflow-cpu", "numpy"], ["tensorflow", "numpy"]],
    "jax": [["jax", "numpy"]],
    "mxnet": [["mxnet==1.9.1", "numpy<1.24"]],
}
#: What is imported to check an environment works.
_MODULES = {"tensorflow": "tensorflow", "jax": "jax", "mxnet": "mxnet"}
#: The order of the table's columns.
ORDER = ("pytorch", "tensorflow", "mxnet", "jax")


@dataclass
class Environment:
    framework: str
    python: str | None = None  # the interpreter that runs its snippets (None: none could be set up)
    version: str = ""
    log: list[str] = field(default_factory=list)


@dataclass
class Result:
    weights: float = float("nan")
    worst_stage: float = float("nan")
    worst_name: str = ""
    unchecked: tuple[str, ...] = ()
    saved_ok: bool = False
    error: str = ""
    leaves_out: tuple[str, ...] = ()
    ok: bool = False


def _quiet_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(
        PYTHONNOUSERSITE="1",
        TF_CPP_MIN_LOG_LEVEL="2",
        JAX_PLATFORMS="cpu",
        CUDA_VISIBLE_DEVICES="",
        OMP_NUM_THREADS="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return env


def _pythons() -> list[str]:
    """This interpreter first, then every other CPython 3 found here (PATH, pyenv), newest first."""
    found: list[str] = [sys.executable]
    names = [f"python3.{minor}" for minor in range(13, 7, -1)]
    for name in names:
        path = shutil.which(name)
        if path:
            found.append(path)
    for path in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")), reverse=True):
        found.append(path)
    unique: list[str] = []
    seen: set[str] = set()
    for path in found:
        real = os.path.realpath(path)
        if real not in seen and os.access(path, os.X_OK):
            seen.add(real)
            unique.append(path)
    return unique


def _version(python: str) -> str:
    done = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def _setup(framework: str, root: Path) -> Environment:
    """A virtual environment with ``framework`` installed, reused when it already works."""
    env = Environment(framework)
    pythons = _pythons() if framework == "mxnet" else [sys.executable]
    for python in pythons:
        version = _version(python)
        target = root / f"{framework}-py{version}"
        exe = target / "bin" / "python"
        if not exe.exists():
            made = subprocess.run([python, "-m", "venv", str(target)], capture_output=True, text=True)
            if made.returncode != 0:
                env.log.append(f"Python {version}: no virtual environment ({_last_line(made.stderr)})")
                continue
        for packages in FRAMEWORK_PACKAGES[framework]:
            if _imports(exe, framework):
                break
            started = time.perf_counter()
            done = subprocess.run(
                [str(exe), "-m", "pip", "install", "-q", *packages],
                capture_output=True,
                text=True,
                env=_quiet_env(),
                timeout=1800,
            )
            seconds = time.perf_counter() - started
            if done.returncode != 0:
                env.log.append(f"Python {version}: pip install {' '.join(packages)} failed ({_last_line(done.stderr)})")
            else:
                env.log.append(f"Python {version}: installed {' '.join(packages)} in {seconds:.0f} s")
        problem = _import_problem(exe, framework)
        if problem is None:
            env.python, env.version = str(exe), _framework_version(exe, framework)
            env.log.append(f"Python {version}: {framework} {env.version} imports")
            return env
        env.log.append(f"Python {version}: import {_MODULES[framework]} fails ({problem})")
    return env


def _imports(exe: Path, framework: str) -> bool:
    return exe.exists() and _import_problem(exe, framework) is None


def _import_problem(exe: Path, framework: str) -> str | None:
    done = _run_code(exe, f"import {_MODULES[framework]}")
    return None if done.returncode == 0 else _last_line(done.stderr)


def _framework_version(exe: Path, framework: str) -> str:
    module = _MODULES[framework]
    done = _run_code(exe, f"import {module}, numpy; print({module}.__version__, 'numpy', numpy.__version__)")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "?"


def _run_code(exe: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by the environment's interpreter, away from this checkout (its own imports only)."""
    return subprocess.run(
        [str(exe), "-c", code],
        capture_output=True,
        text=True,
        env=_quiet_env(),
        cwd=tempfile.gettempdir(),
        timeout=600,
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no message"


def _run_case(python: str, harness: Path, snippet: Snippet, folder: Path, reference: dict, dtype: str) -> Result:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "snippet.py").write_text(snippet.code, encoding="utf-8")
    (folder / "spans.json").write_text(json.dumps(spans_json(snippet)), encoding="utf-8")
    if snippet.data:
        snippet.save_data(folder / snippet.data_file)
    out = folder / "out.npz"
    result = Result(leaves_out=snippet.leaves_out)
    try:
        done = subprocess.run(
            [python, str(harness), "snippet.py", "spans.json", "out.npz"],
            cwd=folder,
            capture_output=True,
            text=True,
            env=_quiet_env(),
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        result.error = "timed out"
        return result
    if done.returncode != 0 or not out.exists():
        result.error = _last_line(done.stderr)
        return result
    with np.load(out) as got:
        captured = {name[len("stage_") :]: got[name] for name in got.files if name.startswith("stage_")}
        weights, output, saved = got["weights"], got["output"], got["saved_weights"]
    diffs = differences(captured, reference)
    result.weights = differences({"weights": weights}, {"weights": reference["weights"]})["weights"]
    output_diff = differences({"output": output}, {"output": reference["output"]})["output"]
    diffs["output (returned)"] = output_diff
    worst = max(diffs.items(), key=lambda item: item[1])
    result.worst_name, result.worst_stage = worst[0], worst[1]
    result.unchecked = tuple(s for s in snippet.stage_spans if s not in captured)
    result.saved_ok = saved.shape == weights.shape and np.array_equal(saved, weights, equal_nan=True)
    tolerance = TOLERANCE[dtype]
    # The weights and what they make (the output) within the tolerance; the stages before, sums in
    # another order, within ten times it.
    final = ("weights", "applied_weights", "output", "output (returned)")
    stage_ok = all(v <= (tolerance if k in final else STAGE_TOLERANCE[dtype]) for k, v in diffs.items())
    result.ok = result.weights <= tolerance and stage_ok and result.saved_ok
    return result


def _cell(result: Result | None) -> str:
    if result is None:
        return "-"
    if result.error:
        return "error"
    flag = "" if result.ok else "*"
    flag += "L" if result.leaves_out else ""
    return f"{_fmt(result.weights)} | {_fmt(result.worst_stage)}{flag}"


def _fmt(x: float) -> str:
    if x != x:
        return "nan"
    if x == 0:
        return "0"
    return f"{x:.0e}"


def run(frameworks: tuple[str, ...] = ORDER, venvs: str | None = None, cases: tuple[str, ...] = ()) -> int:
    root = Path(venvs) if venvs else Path(tempfile.mkdtemp(prefix="attnviz-snippets-"))
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="attnviz-snippet-runs-"))
    # The harness in a folder of its own: a script's folder is the first place Python imports
    # from, and a folder named like a package there ("jax", where the JAX snippets run) would
    # be imported instead of it (Keras tries `import jax`).
    harness = work / "harness" / "harness.py"
    harness.parent.mkdir()
    shutil.copyfile(harness_module.__file__, harness)
    print(f"environments under {root}; snippets run in {work}")
    print(f"this machine: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")

    pythons: dict[str, str] = {}
    for framework in frameworks:
        if framework == "pytorch":
            import torch

            pythons["pytorch"] = sys.executable
            print(f"pytorch: this interpreter, torch {torch.__version__}")
            continue
        started = time.perf_counter()
        env = _setup(framework, root)
        for line in env.log:
            print(f"{framework}: {line}")
        print(f"{framework}: ready in {time.perf_counter() - started:.0f} s" if env.python else f"{framework}: none")
        if env.python:
            pythons[framework] = env.python

    names = cases or tuple(CASES)
    results: dict[tuple[str, str], Result] = {}
    jobs = []
    with ThreadPoolExecutor(max_workers=max(1, min(4, (os.cpu_count() or 2)))) as pool:
        for name in names:
            case = CASES[name]
            state = case.build()
            outcome = run_state(state, 0, case.focus)
            if outcome.view is None:
                print(f"{name}: attnviz refuses it ({outcome.error})")
                continue
            inp = snippet_input(state, outcome, focus=case.focus)
            reference = reference_stages(inp, outcome.view)
            for framework, python in pythons.items():
                snippet = generate(inp, framework)
                folder = work / "runs" / framework / name
                jobs.append(
                    (name, framework, pool.submit(_run_case, python, harness, snippet, folder, reference, inp.dtype))
                )
        for name, framework, future in jobs:
            results[(name, framework)] = future.result()

    columns = [f for f in ORDER if f in frameworks]
    header = f"{'case':26} {'book':4}  " + "  ".join(f"{FRAMEWORK_TITLES[f]:>16}" for f in columns)
    print()
    print("largest difference from the app: weights | worst stage (relative to max(1, |value|))")
    print(header)
    for name in names:
        if not any((name, f) in results for f in columns):
            continue
        book = "yes" if CASES[name].book else ""
        cells = "  ".join(f"{_cell(results.get((name, f))):>16}" for f in columns)
        print(f"{name:26} {book:4}  {cells}")
    print()
    failed = 0
    for framework in columns:
        mine = [(n, r) for (n, f), r in results.items() if f == framework]
        if not mine:
            print(f"{FRAMEWORK_TITLES[framework]}: not run")
            continue
        good = sum(r.ok for _n, r in mine)
        in_book = [r for n, r in mine if CASES[n].book]
        worst_book = max((r.weights for r in in_book if not r.error), default=float("nan"))
        print(
            f"{FRAMEWORK_TITLES[framework]}: {good}/{len(mine)} cases within tolerance; book's cases: largest "
            f"weight difference {_fmt(worst_book)}"
        )
        for name, r in mine:
            if r.error:
                failed += 1
                print(f"  {name}: {r.error}")
            elif not r.ok:
                # A snippet that says at its top what it leaves out may differ by that much.
                failed += 0 if r.leaves_out else 1
                why = f"worst stage {r.worst_name} {_fmt(r.worst_stage)}" + (
                    "" if r.saved_ok else ", --save-weights wrote other weights"
                )
                print(f"  {name}: {why}")
            for item in r.leaves_out:
                print(f"  {name} leaves out: {item}")
    return 1 if failed else 0
