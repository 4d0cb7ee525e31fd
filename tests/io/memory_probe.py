"""Open a file in a child process under a memory cap: what was refused, the peak memory, the time.

The probe and the two files of issue 12 live in ``attnviz.bench.safety`` (the benchmark quotes the
same figures); this module keeps the names the tests import. Run directly for the numbers of the
two files issue 12 names (``python -m attnviz.bench safety`` prints them beside every other
figure of the issue)::

    PYTHONPATH=$PWD python tests/io/memory_probe.py
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from attnviz.bench.safety import Probe, bytearray_pt, header_bomb_npz
from attnviz.bench.safety import probe_load as probe

__all__ = ["Probe", "bytearray_pt", "header_bomb_npz", "probe"]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        files = [bytearray_pt(Path(folder) / "tiny.pt"), header_bomb_npz(Path(folder) / "bomb.npz")]
        for path in files:
            runs = [probe(path) for _ in range(5)]
            peaks = [r.peak_mb for r in runs]
            times = [r.seconds for r in runs]
            print(
                f"{path.name} ({path.stat().st_size:,} bytes): peak +{statistics.median(peaks):.1f} MB "
                f"(max {max(peaks):.1f}), {statistics.median(times) * 1000:.1f} ms median "
                f"(max {max(times) * 1000:.1f}); {runs[0].error}"
            )


if __name__ == "__main__":
    main()
