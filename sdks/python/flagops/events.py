"""
Events: exposures (which variation a user was served, for experiment analysis and the sample-ratio check) and
track events (what users did), sent in batches with ``POST /v1/events`` from a background thread.

Recording an exposure is on the evaluation's path, so it does little: a look-up of (flag, variation, user) in
the set of what this flush window already recorded (one exposure per user, flag and variation per window: a
user evaluated in a loop is one exposure, not thousands, so per-variation counts stay close to users, as the
sample-ratio check assumes) and, for a new one, an append to a bounded queue that drops its oldest event when
full. Timestamps of exposures, JSON, HTTP and retries happen on the sender's thread.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from .transport import Transport

MAX_BATCH = 1000  # events per request (the server's limit)
MAX_USER_ID_LENGTH = 256  # longer ids are sent without userId (the server refuses them)
MAX_TRACK_VALUE = 1e9
CLOSE_ATTEMPTS = 3
CLOSE_RETRY_DELAY = 0.25
MAX_SEEN = 262_144  # distinct exposures a window remembers; beyond, it starts over (duplicates, never fewer)
TRACK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


@dataclass(frozen=True)
class EventStats:
    """The client's event counts since it started."""

    sent: int  # accepted by the server (202)
    dropped: int  # the queue was full (oldest first), the flag left the snapshot, or closing could not send them
    rejected: int  # in requests the server refused (4xx): not sent again


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _next_window(now: float, interval: float) -> float:
    """When a window starting at ``now`` ends: after ``interval``, or at the next UTC hour if that comes first."""
    hour = (int(now) // 3600 + 1) * 3600
    return min(now + interval, hour)


class EventSender:
    """The queue and the thread that sends it; ``serves(flag_key, variation)`` tells which exposures still apply."""

    def __init__(
        self,
        transport: Transport,
        serves: Callable[[str, str], bool],
        backoff: Callable[[int], float],
        flush_interval: float,
        queue_size: int,
        logger: logging.Logger,
    ) -> None:
        self._transport = transport
        self._serves = serves
        self._backoff = backoff
        self._interval = flush_interval
        self._max = queue_size
        self._batch_at = min(MAX_BATCH, queue_size)
        self._logger = logger
        self._lock = threading.Lock()
        self._queue: deque = deque()  # (kind, key, variation_or_value, user_id, at_ms)
        self.seen: set = set()  # what this window recorded; read without the lock
        self._window_start = time.time()
        self._pending: list = []  # drained, not yet accepted: the sender's thread and the final flush only
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._sent = self._dropped = self._rejected = 0
        self._thread = threading.Thread(target=self._run, name="flagops-events", daemon=True)
        self._thread.start()

    # ---- recording (any thread) ----

    def expose(self, key: tuple) -> None:
        """Records the exposure ``(flag_key, variation, user_id)`` unless this window has it (callers check ``seen``
        first, without the lock: a repeat is the common case)."""
        with self._lock:
            if key in self.seen or self._closed.is_set():
                return
            if len(self.seen) >= MAX_SEEN:
                self.seen = set()
            self.seen.add(key)
            self._push(("exposure", *key, 0))

    def track(self, name: str, user_id: str | None, value: float | None) -> bool:
        with self._lock:
            if self._closed.is_set():
                return False
            self._push(("track", name, value, user_id, int(time.time() * 1000)))
            return True

    def count_dropped(self, n: int = 1) -> None:
        with self._lock:
            self._dropped += n

    def _push(self, event: tuple) -> None:
        if len(self._queue) >= self._max:
            self._queue.popleft()
            self._dropped += 1
        self._queue.append(event)
        if len(self._queue) == self._batch_at:
            self._wake.set()

    @property
    def stats(self) -> EventStats:
        return EventStats(self._sent, self._dropped, self._rejected)

    # ---- sending (the sender's thread, then close) ----

    def _drain(self, now: float, new_window: bool) -> None:
        """Moves the queue into pending: exposures stamped with their window's start (windows end at each UTC
        hour, so the stamp is in the evaluation's hour), those of flags no longer served dropped (the server
        would refuse the whole request for them)."""
        with self._lock:
            taken = list(self._queue)
            self._queue.clear()
            window_ms = int(self._window_start * 1000)
            if new_window:
                self.seen = set()
                self._window_start = now
        gone = 0
        for kind, key, third, user_id, at in taken:
            if kind == "exposure":
                if not self._serves(key, third):
                    gone += 1
                    continue
                event = {"type": "exposure", "flagKey": key, "variation": third, "at": _iso(window_ms)}
            else:
                event = {"type": "track", "name": key, "at": _iso(at)}
                if third is not None:
                    event["value"] = third
            if isinstance(user_id, str) and len(user_id) <= MAX_USER_ID_LENGTH:
                event["userId"] = user_id
            self._pending.append(event)
        over = len(self._pending) - self._max
        if over > 0:
            del self._pending[:over]
        if gone or over > 0:
            self.count_dropped(gone + max(over, 0))

    def _send_pending(self) -> bool:
        """Posts pending in batches of at most 1,000, oldest first; False at the first batch to try again later."""
        while self._pending:
            batch = self._pending[:MAX_BATCH]
            try:
                status, answer = self._transport.post_events(batch)
            except OSError as err:  # the network, a timeout
                self._logger.debug("flagops: POST /v1/events failed: %s", err)
                return False
            if status == 408 or status == 429 or status >= 500:
                return False
            with self._lock:
                if 200 <= status < 300:
                    self._sent += len(batch)
                else:
                    self._rejected += len(batch)
            if not 200 <= status < 300:
                # Refused, it would be refused again: nothing of it was counted, and it is not sent again.
                self._logger.warning("flagops: POST /v1/events answered %s: %d events dropped: %s", status, len(batch), answer)
            del self._pending[: len(batch)]
        return True

    def _run(self) -> None:
        window_end = _next_window(time.time(), self._interval)
        failures = 0
        retry_at = 0.0
        while not self._closed.is_set():
            due = window_end if failures == 0 else min(window_end, retry_at)
            timeout = max(0.0, due - time.time())
            if failures == 0:
                self._wake.wait(timeout)  # a full batch wakes the thread early
            else:
                self._closed.wait(timeout)  # a full batch waits for the retry; the queue keeps the newest
            self._wake.clear()
            if self._closed.is_set():
                return
            now = time.time()
            new_window = now >= window_end
            if new_window:
                window_end = _next_window(now, self._interval)
            self._drain(now, new_window)
            if self._send_pending():
                failures = 0
            else:
                failures += 1
                if failures == 1:
                    self._logger.warning("flagops: POST /v1/events failed; %d events wait for a retry", len(self._pending))
                retry_at = now + self._backoff(failures)

    def close(self) -> None:
        """Stops the thread and sends what is queued: at most 3 tries a quarter of a second apart, then drops it."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=15)  # a request under way ends within the request timeout
        self._drain(time.time(), True)
        for attempt in range(CLOSE_ATTEMPTS):
            if not self._pending or self._send_pending():
                break
            if attempt + 1 < CLOSE_ATTEMPTS:
                time.sleep(CLOSE_RETRY_DELAY)
        if self._pending:
            self._logger.warning("flagops: closing: %d events could not be sent", len(self._pending))
            self.count_dropped(len(self._pending))
            self._pending = []


def check_track(name: object, value: object) -> str | None:
    """Why the server would refuse this track event, or None."""
    if not isinstance(name, str) or not TRACK_NAME.fullmatch(name):
        return f"{name!r} is not an event name (1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit)"
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or abs(value) > MAX_TRACK_VALUE:
            return f"the value {value!r} is not a number from -1e9 to 1e9"
    return None
