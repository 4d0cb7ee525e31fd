"""Run a snippet and record what its stage lines compute (used by the tests and the bench).

A snippet says which of its lines compute each stage and which variable holds the result once
the last of them has run (``Snippet.stage_spans``). ``run_traced`` executes the code under a line
tracer and, each time such a line has just run, copies that variable (or the value the line
returns) as a numpy array: the test of a mapping is then that these arrays are the app's stages.

Standalone on purpose: it imports only the standard library and numpy, so the bench copies this
file into a framework's own environment and runs it there as a script:

    python harness.py SNIPPET.py SPANS.json OUT.npz

SPANS.json maps each stage to a list of {"last": line, "variable": name}; OUT.npz receives
"<stage>" (the last value recorded for it), "weights" and "output" from the snippet's namespace,
and "saved_weights" (what ``--save-weights`` wrote).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from typing import Any

import numpy as np

RETURN_VALUE = "<return>"
FILENAME = "<attnviz-snippet>"


def to_numpy(value: Any) -> np.ndarray:
    """A framework's tensor (torch, TensorFlow, JAX, MXNet) as numpy; half floats as float32."""
    if hasattr(value, "asnumpy"):  # MXNet
        array = value.asnumpy()
    elif hasattr(value, "detach"):  # PyTorch
        tensor = value.detach().cpu()
        if str(tensor.dtype) in ("torch.bfloat16", "torch.float16"):
            tensor = tensor.float()
        array = tensor.numpy()
    elif hasattr(value, "numpy"):  # TensorFlow
        array = value.numpy()
    else:  # JAX, numpy
        array = np.asarray(value)
    array = np.asarray(array)
    if array.dtype.kind not in "biuf" or (array.dtype.kind == "f" and array.dtype.itemsize < 4):
        array = array.astype(np.float32)  # bfloat16 (ml_dtypes) and float16
    return np.array(array, copy=True)


def run_traced(
    code: str, spans: dict[str, list[dict[str, Any]]], argv: list[str] | None = None
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Execute ``code`` as ``__main__`` with ``sys.argv[1:] = argv``; returns its namespace and, per
    stage, the value its lines computed (the last one recorded)."""
    targets: dict[int, list[tuple[str, str]]] = {}
    for stage, items in spans.items():
        for item in items:
            if item.get("variable"):
                targets.setdefault(int(item["last"]), []).append((stage, str(item["variable"])))
    captured: dict[str, np.ndarray] = {}
    previous: dict[int, int] = {}

    def grab(frame: Any, line: int, returned: Any, returning: bool) -> None:
        for stage, variable in targets.get(line, ()):
            if variable == RETURN_VALUE:
                if returning:
                    captured[stage] = to_numpy(returned)
            elif variable in frame.f_locals:
                captured[stage] = to_numpy(frame.f_locals[variable])

    def local(frame: Any, event: str, arg: Any) -> Any:
        key = id(frame)
        if event == "line":
            if key in previous:
                grab(frame, previous[key], None, False)
            previous[key] = frame.f_lineno
        elif event == "return":
            if key in previous:
                grab(frame, previous.pop(key), arg, True)
        return local

    def global_trace(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == FILENAME else None

    namespace: dict[str, Any] = {"__name__": "__main__"}
    old_argv = sys.argv
    sys.argv = ["snippet.py", *(argv or [])]
    compiled = compile(code, FILENAME, "exec")
    sys.settrace(global_trace)
    try:
        exec(compiled, namespace)
    finally:
        sys.settrace(None)
        sys.argv = old_argv
    return namespace, captured


def main(args: list[str]) -> int:
    snippet_path, spans_path, out_path = args
    with open(snippet_path, encoding="utf-8") as fh:
        code = fh.read()
    with open(spans_path, encoding="utf-8") as fh:
        spans = json.load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        saved_path = os.path.join(tmp, "weights.npy")
        namespace, captured = run_traced(code, spans, ["--save-weights", saved_path])
        saved = np.load(saved_path)
    arrays: dict[str, Any] = {f"stage_{k}": v for k, v in captured.items()}
    arrays["weights"] = to_numpy(namespace["weights"])
    arrays["output"] = to_numpy(namespace["output"])
    arrays["saved_weights"] = saved
    np.savez(out_path, **arrays)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
