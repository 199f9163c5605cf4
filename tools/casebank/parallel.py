"""The one process pool: CPU-bound work over worker processes, in chunks, with bounded memory.

Checking cases and hashing every version of every case are dominated by YAML parsing, which
holds the GIL; on a multi-core machine the chunks go to a process pool. Results come back in
input order, and only a few chunks are in flight at once. The same function runs in-process
when the pool would not pay for itself, so both paths share code.

Workers are spawned (a fresh interpreter), so that no thread is ever forked: reading history
runs a thread that feeds ``git cat-file``. A caller that runs no thread may ask for ``fork``,
which starts a worker without importing casebank again (validation does: a third of a second
per worker on a small run).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from itertools import islice
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

MAX_WORKERS = 8
# From this many jobs on (case files parsed, pages rendered), a worker pool pays for itself.
POOL_FROM = 400


@contextmanager
def lasting() -> Iterator[None]:
    """Build data that lasts as long as the process (a release's cases, a site's input) with
    the cyclic collector paused, then freeze what was built: such data holds no reference
    cycle, yet each collection pass walked every object built so far (scoring 1,000 full-size
    cases spent about a third of its time there), and after a fork a pass would also touch
    every shared page. Frozen objects are never walked again (``gc.freeze``)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def fork_pays(jobs: int) -> bool:
    """Whether ``jobs`` items are worth forked workers: enough of them, on a platform that
    forks (for work whose workers read what the parent holds, or must not import again)."""
    return jobs >= POOL_FROM and "fork" in multiprocessing.get_all_start_methods()


def workers(jobs: int | None = None) -> int:
    """How many processes to use: ``jobs`` if given, else one per available core (at most 8)."""
    if jobs is not None:
        return max(1, jobs)
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        available = os.cpu_count() or 1
    return max(1, min(available, MAX_WORKERS))


def _chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def map_chunks(
    function: Callable[[list[T]], list[R]],
    items: Iterable[T],
    *,
    size: int = 200,
    parallel: bool = True,
    jobs: int | None = None,
    initializer: Callable[..., None] | None = None,
    initargs: Sequence[Any] = (),
    start: str = "spawn",
) -> Iterator[R]:
    """``function`` applied to consecutive chunks of ``items``; the results, in order.

    ``function`` and ``initializer`` must be module-level functions (they are pickled by
    reference); ``initializer(*initargs)`` runs once in each worker, or once here in-process.
    """
    count = workers(jobs) if parallel else 1
    if count < 2:
        if initializer is not None:
            initializer(*initargs)
        for chunk in _chunks(items, size):
            yield from function(chunk)
        return
    if start not in multiprocessing.get_all_start_methods():
        start = "spawn"
    context = multiprocessing.get_context(start)
    with ProcessPoolExecutor(
        max_workers=count, mp_context=context, initializer=initializer, initargs=tuple(initargs)
    ) as pool:
        pending: deque[Future[list[R]]] = deque()
        for chunk in _chunks(items, size):
            pending.append(pool.submit(function, chunk))
            if len(pending) >= 3 * count:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
