"""Peak memory of additive attention, measured in a fresh process.

The peak resident set size (VmHWM) is reset after the inputs exist (Linux ``clear_refs``), so
the figure is what the computation itself adds. Run in a child process so that nothing the
caller allocated earlier blurs it.
"""

from __future__ import annotations

import json
import subprocess
import sys

#: What a child process measuring its peak memory defines: ``status(field)``, a field of
#: /proc/self/status in MiB ("VmRSS" now, "VmHWM" the peak), and ``reset_peak()``, which makes
#: the peak the current size (False where the kernel does not allow it).
PEAK_PROBE = r"""
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(field)

def reset_peak():
    try:
        open("/proc/self/clear_refs", "w").write("5")
        return True
    except OSError:
        return False
"""

_CHILD = r"""
import json, sys, torch
n, hidden, d, which = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.set_grad_enabled(False)
"""
_CHILD += PEAK_PROBE
_CHILD += r"""

g = torch.Generator().manual_seed(0)
q, k = torch.randn(1, n, d, generator=g), torch.randn(1, n, d, generator=g)
v = torch.randn(1, n, d, generator=g)
vl = torch.tensor([n // 2])
if which == "attnviz":
    from attnviz.engine import attend
    run = lambda: attend(q, k, v, vl, scoring="additive", num_hiddens=hidden, keep=("weights", "output"))
else:
    from attnviz.bench.reference import BookAdditiveAttention
    module = BookAdditiveAttention(d, d, hidden, 0.0).eval()
    run = lambda: module(q, k, v, vl)
small = torch.randn(1, 8, d)
# Warm up the libraries with a tiny call so their one-off allocations are not counted.
if which == "attnviz":
    attend(small, small, small, scoring="additive", num_hiddens=hidden)
else:
    module(small, small, small, None)
reset = reset_peak()
base = status("VmRSS")
result = run()
peak = status("VmHWM")
kept = n * n * 4 / 2**20  # the (1, n, n) float32 weights that are returned
print(json.dumps({"base_mib": base, "peak_mib": peak, "peak_above_inputs_mib": peak - base,
                  "returned_weights_mib": kept, "hwm_reset": reset}))
"""


def _measure(which: str, n: int, hidden: int, d: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(n), str(hidden), str(d), which],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def additive_peak_mib(n: int = 2048, hidden: int = 64, d: int = 64, include_book: bool = False) -> dict[str, float]:
    """Peak memory above the inputs of additive attention at (1, n, n), hidden size ``hidden``."""
    report: dict[str, float] = dict(_measure("attnviz", n, hidden, d))
    report["naive_feature_tensor_mib"] = n * n * hidden * 4 // 2**20
    if include_book:
        report["book_peak_above_inputs_mib"] = _measure("book", n, hidden, d)["peak_above_inputs_mib"]
    return report
