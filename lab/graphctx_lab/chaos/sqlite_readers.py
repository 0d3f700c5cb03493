"""Reader load for the concurrency scenarios: threads that probe a store until told to stop.

Each thread runs one probe (a retrieval through the provider, or a whole-store snapshot
check) in a loop, records how long every call took and every problem it reported. A phase
is a window: :meth:`ReaderLoad.window` runs the probes while ``body`` runs (the writer), or
for a fixed time when there is no writer (the idle baseline).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["Probe", "ReaderLoad", "WindowResult", "p95"]

Probe = Callable[[], list[str]]  # one call; returns the problems it saw (empty: all sound)
JOIN_DEADLINE_S = 30.0


def p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0


@dataclass
class WindowResult:
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    def calls(self, name: str) -> int:
        return len(self.latencies_ms.get(name, []))

    def merge(self, other: WindowResult) -> None:
        """Pool another window of the same kind into this one."""
        for name, values in other.latencies_ms.items():
            self.latencies_ms.setdefault(name, []).extend(values)
        self.problems.extend(other.problems)
        self.elapsed_s += other.elapsed_s


class ReaderLoad:
    """Named probes, each looping on its own thread during a window."""

    def __init__(self, probes: dict[str, Probe]) -> None:
        self.probes = probes

    def warm_up(self) -> list[str]:
        """One call of each probe, unmeasured: the first read of a thread opens its
        connection and may load the vector matrix, which is not what a window measures."""
        return [problem for probe in self.probes.values() for problem in probe()]

    def window(self, body: Callable[[], None] | None, idle_s: float = 0.0) -> WindowResult:
        """Run every probe until ``body`` returns (or for ``idle_s`` without a body).

        Every probe completes at least one call, so a window is never empty."""
        result = WindowResult()
        lock = threading.Lock()
        stop = threading.Event()
        first_call_done = [threading.Event() for _ in self.probes]

        def loop(name: str, probe: Probe, done_once: threading.Event) -> None:
            while True:
                started = time.monotonic()
                try:
                    found = probe()
                except Exception as exc:  # a probe that raises saw a broken store
                    found = [f"{name} raised {type(exc).__name__}: {exc}"]
                elapsed_ms = (time.monotonic() - started) * 1000
                with lock:
                    result.latencies_ms.setdefault(name, []).append(elapsed_ms)
                    result.problems.extend(f"{name}: {p}" for p in found)
                done_once.set()
                if stop.is_set():
                    return

        threads = [
            threading.Thread(target=loop, args=(name, probe, event), name=f"probe-{name}")
            for (name, probe), event in zip(self.probes.items(), first_call_done, strict=True)
        ]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        try:
            if body is None:
                stop.wait(idle_s)  # the window itself: nothing to synchronise with
            else:
                body()
        finally:
            for event in first_call_done:
                event.wait(JOIN_DEADLINE_S)
            stop.set()
            for thread in threads:
                thread.join(JOIN_DEADLINE_S)
        result.elapsed_s = time.monotonic() - started
        return result
