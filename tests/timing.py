"""Timing for the tests that check an algorithm's growth (n against 4n), never a clock's figure.

CPU time of this process, the best of a few runs, with the garbage collector held off: other
processes on a busy machine, and collector passes whose cost grows with everything alive, say
nothing about the algorithm under test and made such ratios flaky.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable


def cpu_seconds(work: Callable[[], object], runs: int = 3) -> float:
    """The least CPU time `work()` took in `runs` runs."""
    best = float("inf")
    enabled = gc.isenabled()
    # what is alive already (a worker's shared corpus: a gigabyte) is frozen, so that each
    # run's collection before it walks only what the runs made, not the whole heap
    gc.freeze()
    try:
        for _ in range(runs):
            gc.collect()
            gc.disable()
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
            gc.enable()
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()
        else:
            gc.disable()
    return best
