"""Bounded work: what a request that computes on its input (encoding in the playground and
`/api/encode`, a diff on text, a SQL query) may take from the server.

Every such request goes through `Work.run`, which
1. refuses it when a browser marks it as coming from another site (access.py, rule 3);
2. admits it into at most `workers` running at once, with at most `queue` more waiting, each
   for at most `wait` seconds; past that a 503 with Retry-After says the server is busy;
3. runs it on a worker thread, off the event loop, with a deadline (`Deadline`) it checks
   between its steps; past it, a 503 naming the budget.

So a burst of heavy requests queues or is refused, while the pages keep answering: they run on
the event loop and other threads, never behind a heavy request. A worker thread cannot be
stopped from outside, so a request's slot is released only when its thread has returned: the
cap holds even when a client gives up.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Optional, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection

from . import limits
from .access import require_same_origin

T = TypeVar("T")


class OverBudget(HTTPException):
    def __init__(self, seconds: float):
        super().__init__(
            503,
            f"the request ran past its budget of {seconds:g} s of work and was stopped; "
            "send less text or fewer versions",
            headers={"retry-after": "1"},
        )


class Deadline:
    """When a request's work must end; `check()` between steps raises `OverBudget` past it."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise OverBudget(self.seconds)


def busy(why: str, retry_after: int) -> HTTPException:
    return HTTPException(
        503, f"the server is busy: {why}; try again in {retry_after} s", headers={"retry-after": str(retry_after)}
    )


class Work:
    """The admission and budget of heavy requests (see the module docstring)."""

    def __init__(
        self,
        workers: Optional[int] = None,
        queue: Optional[int] = None,
        wait: Optional[float] = None,
        seconds: Optional[float] = None,
    ):
        self.workers = workers or limits.HEAVY_WORKERS
        self.queue = limits.HEAVY_QUEUE if queue is None else queue
        self.wait = limits.HEAVY_WAIT_SECONDS if wait is None else wait
        self.seconds = seconds or limits.HEAVY_SECONDS
        self.running = 0
        self.waiting = 0
        self.refused = 0  # 503s since the start (how many it turned away, for tests and the log)
        self._slots: Optional[asyncio.Semaphore] = None

    async def run(self, conn: HTTPConnection, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args, deadline)` on a worker thread, once admitted (see the module docstring)."""
        require_same_origin(conn)
        if self._slots is None:  # made on first use, inside the server's event loop
            self._slots = asyncio.Semaphore(self.workers)
        slots = self._slots
        if slots.locked():
            if self.waiting >= self.queue:
                self.refused += 1
                raise busy(f"{self.running} heavy requests are running and {self.waiting} waiting", 2)
            self.waiting += 1
            try:
                await asyncio.wait_for(slots.acquire(), self.wait)
            except asyncio.TimeoutError:
                self.refused += 1
                raise busy(f"this request waited {self.wait:g} s for a turn", 2) from None
            finally:
                self.waiting -= 1
        else:
            await slots.acquire()
        self.running += 1
        try:
            # run_in_threadpool is not cancellable: the slot is held until the thread returns.
            return await run_in_threadpool(fn, *args, Deadline(self.seconds))
        finally:
            self.running -= 1
            slots.release()
