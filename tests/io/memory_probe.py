"""Open a file in a child process under a memory cap: what was refused, the peak memory, the time.

Hostile files are opened in a child because a loader bug would allocate gigabytes; the child
caps its address space (``RLIMIT_AS``) at what it already uses plus ``headroom_mb``, so a bug
shows as a failed test, never as the machine running out of memory. The peak is the growth of
the child's resident set from just before the file is opened (numpy and attnviz.io already
imported) to its peak while loading (``VmHWM``, reset first). Not ``getrusage``'s ``ru_maxrss``:
Linux carries it across ``exec``, so a child of a big process (pytest with torch loaded) would
start from its parent's peak and hide anything smaller.

Run directly for the numbers quoted in issue 12 (the two files it names)::

    PYTHONPATH=$PWD python tests/io/memory_probe.py
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CHILD = r"""
import json, resource, sys, time
import numpy
from attnviz.io import load_session, load_tensor_file

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))

path, headroom = sys.argv[1], int(sys.argv[2]) << 20
with open("/proc/self/statm") as statm:
    mapped = int(statm.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (mapped + headroom, mapped + headroom))
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # resets the peak (VmHWM) to the current resident set
started = time.perf_counter()
try:
    (load_session if path.endswith(".attnviz") else load_tensor_file)(path)
    error = None
except Exception as exc:
    error = type(exc).__name__ + ": " + str(exc)
seconds = time.perf_counter() - started
print(json.dumps({"error": error, "peak_mb": (status("VmHWM") - before) / 1024, "seconds": seconds}))
"""

@dataclass(frozen=True)
class Probe:
    error: str | None  # "TensorFileError: name: reason", or None when the file loaded
    peak_mb: float
    seconds: float


def probe(path: Path, headroom_mb: int = 2048) -> Probe:
    """Load ``path`` (a session when it ends in ``.attnviz``) in a capped child process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), str(headroom_mb)], capture_output=True,
                          text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-2000:]
    return Probe(**json.loads(done.stdout.strip().splitlines()[-1]))


# --- the two files of issue 12 ----------------------------------------------------------------


def bytearray_pt(path: Path, nbytes: int = 6_400_000_000) -> Path:
    """A 32-byte legacy ``.pt`` (a bare pickle) whose first object is ``bytearray(nbytes)``."""
    size = nbytes.to_bytes(5, "little")
    path.write_bytes(b"\x80\x02cbuiltins\nbytearray\n\x8a\x05" + size + b"\x85R.")
    return path


def header_bomb_npz(path: Path, header_bytes: int = 1_000_000_000, member: str = "keys.npy") -> Path:
    """A ~1 MB ``.npz`` whose member's ``.npy`` header declares ``header_bytes`` of padding (which
    compresses to almost nothing)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(member, "w", force_zip64=True) as stream:
            stream.write(b"\x93NUMPY\x02\x00" + struct.pack("<I", header_bytes))
            block = b" " * (1 << 20)
            for _ in range(header_bytes >> 20):
                stream.write(block)
    return path


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        files = [bytearray_pt(Path(folder) / "tiny.pt"), header_bomb_npz(Path(folder) / "bomb.npz")]
        for path in files:
            runs = [probe(path) for _ in range(5)]
            peaks = sorted(r.peak_mb for r in runs)
            times = sorted(r.seconds for r in runs)
            print(f"{path.name} ({path.stat().st_size:,} bytes): peak +{peaks[2]:.1f} MB "
                  f"(max {peaks[-1]:.1f}), {times[2] * 1000:.1f} ms median (max {times[-1] * 1000:.1f}); "
                  f"{runs[0].error}")


if __name__ == "__main__":
    main()
