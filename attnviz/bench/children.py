"""The safety benchmark's children: a fresh interpreter that runs a probe under a capped address
space and reports its peak memory (``child``), and what a hostile case may cost. Shared by
``safety`` and its issue-30 sections (``safety_text``, ``safety_outputs``), which would otherwise
import each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["HOSTILE_PEAK_MB", "HOSTILE_SECONDS", "PRELUDE", "ROOT", "child"]

ROOT = Path(__file__).resolve().parents[2]

#: What a hostile file may cost a reader at most (issue 12's targets, kept by issue 30's cases).
HOSTILE_PEAK_MB, HOSTILE_SECONDS = 300, 1.0

# Run first in every child: capping the address space and reading the peak.
PRELUDE = r"""
import json, resource, sys, time

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))

def cap(headroom_mb):
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    limit = mapped + (headroom_mb << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

def start_peak():
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak (VmHWM) starts again from the current resident set
    return status("VmRSS")

def peak_mb(base):
    return (status("VmHWM") - base) / 1024
"""


def child(code: str, *args: str, timeout: float = 300, env: dict[str, str] | None = None) -> Any:
    """Run ``code`` (after the prelude) in a fresh interpreter; its last stdout line is JSON."""
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        **(env or {}),
    }
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + code, *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"probe failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(lines[-1])
