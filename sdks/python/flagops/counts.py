"""
Evaluation counts: the server never sees local evaluations, so the client counts them per flag, variation and
UTC hour and reports them with ``POST /v1/counts`` for the flag stats (and for flag health, which calls a flag
nobody evaluates potentially stale).

Counting is on the evaluation's path and takes no lock: each (flag, variation) has an ``itertools.count`` whose
``next()`` is one atomic step under the GIL. The reporter swaps in a fresh table at each drain and reads the old
one's counters; a thread that took the old table just before the swap may still add to it, so that table is
read once more at the next drain and any late counts go with that report. Nothing counted is lost.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from typing import Callable

from .transport import Transport

HOUR = 3600
MAX_ENTRIES = 1000  # entries per report (the server's limit)
MAX_PER_ENTRY = 1_000_000  # count per entry (the server's limit); a larger count goes in parts
MAX_REPORTS = 100  # reports per send; the rest waits for the next interval
MAX_PENDING = 100_000  # (flag, variation, hour) cells kept through failed reports; the oldest hours go first
CLOSE_TIMEOUT = 2.0  # close() waits at most this long for the last report


def hour_of(seconds: float) -> int:
    """The start of the UTC hour of ``seconds``, in epoch milliseconds."""
    return int(seconds) // HOUR * HOUR * 1000


def _iso_hour(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:00:00.000Z", time.gmtime(ms / 1000))


class CountReporter:
    """The counters, and the thread that reports them every ``interval`` and at each hour's start."""

    def __init__(
        self,
        transport: Transport,
        serves: Callable[[str, str], bool],
        backoff: Callable[[int], float],
        interval: float,
        logger: logging.Logger,
    ) -> None:
        self._transport = transport
        self._serves = serves
        self._backoff = backoff
        self._interval = interval
        self._logger = logger
        self._counters: dict = {}  # (flag_key, variation) -> itertools.count, for the hour below
        self._hour = hour_of(time.time())
        self._settling: tuple | None = None  # (counters, hour, taken) swapped out at the last drain
        self._pending: dict = {}  # (flag_key, variation, hour_ms) -> count not yet accepted
        self._lock = threading.Lock()  # drain and send: the reporter's thread, then close
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="flagops-counts", daemon=True)
        self._thread.start()

    def count(self, flag_key: str, variation: str) -> None:
        """One evaluation of ``flag_key`` that served ``variation`` (any thread)."""
        counters = self._counters
        key = (flag_key, variation)
        counter = counters.get(key)
        if counter is None:
            counter = counters.setdefault(key, itertools.count())
        next(counter)

    # ---- the reporter ----

    def _drain(self, now: float) -> None:
        """Moves what was counted into pending, under the hour it was counted in, and starts a fresh table."""
        counters, hour = self._counters, self._hour
        self._counters = {}
        self._hour = hour_of(now)
        settling = self._settling
        if settling is not None:
            old, old_hour, taken = settling
            for key, counter in list(old.items()):
                self._add(key, old_hour, next(counter) - taken.get(key, 0))
        taken = {}
        for key, counter in list(counters.items()):
            n = next(counter)  # the count so far; the counter now stands at n + 1
            taken[key] = n + 1
            self._add(key, hour, n)
        self._settling = (counters, hour, taken)
        self._trim()

    def _add(self, key: tuple, hour: int, n: int) -> None:
        if n > 0:
            cell = (key[0], key[1], hour)
            self._pending[cell] = self._pending.get(cell, 0) + n

    def _trim(self) -> None:
        over = len(self._pending) - MAX_PENDING
        if over > 0:
            for cell in sorted(self._pending, key=lambda c: c[2])[:over]:
                del self._pending[cell]

    def _send(self, deadline: float | None = None) -> bool:
        """Posts pending in reports; False when the server could not take one (network, 408, 429, 5xx)."""
        for _ in range(MAX_REPORTS):
            entries = []
            taken = {}
            for cell, n in self._pending.items():
                if len(entries) == MAX_ENTRIES:
                    break
                if not self._serves(cell[0], cell[1]):
                    taken[cell] = n  # the flag left the snapshot: the server would leave it out
                    continue
                part = min(n, MAX_PER_ENTRY)
                taken[cell] = part
                entries.append({"flagKey": cell[0], "variation": cell[1], "hour": _iso_hour(cell[2]), "count": part})
            if not taken:
                return True
            if entries:
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                try:
                    status, answer = self._transport.post_counts(entries)
                except OSError as err:  # the network, a timeout
                    self._logger.debug("flagops: POST /v1/counts failed: %s", err)
                    return False
                if status == 408 or status == 429 or status >= 500:
                    return False
                if not 200 <= status < 300:
                    # Refused, it would be refused again: nothing of it was counted, and it is not sent again.
                    self._logger.warning("flagops: POST /v1/counts answered %s: %d counts dropped: %s", status, len(entries), answer)
            for cell, n in taken.items():
                left = self._pending[cell] - n
                if left > 0:
                    self._pending[cell] = left
                else:
                    del self._pending[cell]
        return True

    def _run(self) -> None:
        failures = 0
        while True:
            now = time.time()
            until_hour = (int(now) // HOUR + 1) * HOUR - now + 0.001
            delay = min(self._interval if failures == 0 else self._backoff(failures), until_hour)
            if self._closed.wait(delay):
                return
            with self._lock:
                if self._closed.is_set():
                    return
                self._drain(time.time())
                if self._send():
                    failures = 0
                else:
                    failures += 1
                    if failures == 1:
                        self._logger.warning("flagops: POST /v1/counts failed; %d counts wait for a retry", len(self._pending))

    def close(self) -> None:
        """Stops the thread, then sends what is left, waiting at most ``CLOSE_TIMEOUT`` seconds for it."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=15)  # a report under way ends within the request timeout
        with self._lock:
            self._drain(time.time())
            self._drain(time.time())  # the late counts of the table the first drain swapped out
            if not self._send(time.monotonic() + CLOSE_TIMEOUT) and self._pending:
                self._logger.warning("flagops: closing: %d evaluation counts could not be sent", len(self._pending))
