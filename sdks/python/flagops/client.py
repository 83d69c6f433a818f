"""
The client: the environment's snapshot held in memory and evaluated in process, kept current by two background
threads. The updater fetches the snapshot (a ``?since=`` delta when it holds one the server served) at start, on
each announcement and, while no stream is connected, every ``poll_interval``; the streamer listens to
``/v1/stream`` and applies the small patches it carries without any request. Every update builds a new
immutable snapshot that is swapped in by reference: evaluations never lock and never see half an update.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import logging
import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .context import context_problem, split_context
from .counts import CountReporter
from .events import EventSender, EventStats, check_track
from .details import (
    FLAG_NOT_FOUND,
    GENERAL,
    INVALID_CONTEXT,
    PROVIDER_NOT_READY,
    TYPE_MISMATCH,
    EvaluationDetails,
    describe,
    error_details,
    from_result,
    kind_of,
    matches,
)
from .jsonvalue import copy_json
from .sse import SseEvent, SseParser
from .store import Snapshot, SnapshotError, apply_delta, changed_keys, is_delta, parse_snapshot
from .transport import HttpError, StreamResponse, Transport, connection_lost

NOT_READY = "not_ready"
READY = "ready"
STALE = "stale"
ERROR = "error"

_LOGGER = logging.getLogger("flagops")

# How long close() waits for the updater and streamer threads, whose requests it has cut.
_THREADS_GRACE = 1.0


@dataclass(frozen=True)
class ChangeEvent:
    """The flags whose results may have changed (entries added, changed, removed, or depending on one that did)."""

    keys: list[str]
    version: int


@dataclass(frozen=True)
class StatusEvent:
    status: str
    previous: str
    error: str | None = None


def backoff_delay(attempt: int, initial: float, maximum: float, rand: Callable[[], float] = random.random) -> float:
    """Retry number ``attempt``'s delay: doubling from ``initial`` up to ``maximum``, half of it random ("equal jitter")."""
    ceiling = min(maximum, initial * 2 ** min(max(attempt - 1, 0), 30))
    return ceiling / 2 + rand() * ceiling / 2


# The longest wait before trying again a server that refused or reset the connection.
_RECONNECT_MAX = 1.0


def reconnect_delay(initial: float, maximum: float, rand: Callable[[], float] = random.random) -> float:
    """The wait before reconnecting to a server that is not listening: up to a second (less when ``initial`` is), with jitter."""
    return backoff_delay(1, min(initial, _RECONNECT_MAX), maximum, rand)


def retry_delay(err: BaseException, answered: int, initial: float, maximum: float, rand: Callable[[], float] = random.random) -> float:
    """
    The wait before trying again after ``err``, the ``answered``-th failure in a row the server answered (or that
    timed out). A lost connection is retried within a second, so a restarted server is found at once; a server
    that answers but fails is given room: what its Retry-After asks (at most ``maximum``), else the doubling backoff.
    """
    if connection_lost(err):
        return reconnect_delay(initial, maximum, rand)
    if isinstance(err, HttpError) and err.retry_after is not None:
        return min(err.retry_after, maximum)
    return backoff_delay(answered, initial, maximum, rand)


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"flagops: {name} must be a positive number of seconds")
    return float(value)


class Client:
    """
    A flagops client for one environment (the SDK key fixes it). Evaluating is local and thread-safe; nothing it
    does raises at the caller: a failure returns the caller's default with reason ``error``.
    """

    def __init__(
        self,
        eval_url: str,
        sdk_key: str,
        *,
        stream: bool = True,
        poll_interval: float = 30.0,
        bootstrap: Mapping[str, Any] | None = None,
        request_timeout: float = 10.0,
        retry_initial: float = 1.0,
        retry_max: float = 10.0,
        stream_idle_timeout: float = 60.0,
        logger: logging.Logger | None = None,
        send_exposures: bool = False,
        exposure_flush_interval: float = 10.0,
        event_queue_size: int = 10_000,
        send_counts: bool = True,
        counts_interval: float = 10.0,
    ) -> None:
        if not isinstance(sdk_key, str) or not sdk_key:
            raise ValueError("flagops: sdk_key is required")
        self._transport = Transport(eval_url, sdk_key, _positive("request_timeout", request_timeout))
        self._poll_interval = _positive("poll_interval", poll_interval)
        self._retry_initial = _positive("retry_initial", retry_initial)
        self._retry_max = _positive("retry_max", retry_max)
        self._idle_timeout = _positive("stream_idle_timeout", stream_idle_timeout)
        self._logger = logger or _LOGGER
        flush_interval = _positive("exposure_flush_interval", exposure_flush_interval)
        counts_every = _positive("counts_interval", counts_interval)
        if isinstance(event_queue_size, bool) or not isinstance(event_queue_size, int) or event_queue_size < 1:
            raise ValueError("flagops: event_queue_size must be a positive whole number")

        self._snapshot: Snapshot | None = None  # swapped whole, read without a lock
        self._status = NOT_READY
        self._status_lock = threading.Lock()
        self._swap_lock = threading.Lock()  # one update at a time decides what follows what
        self._wake = threading.Condition()
        self._refresh_wanted = False
        self._stream_up = False
        self._announced: int | None = None  # the highest version the stream announced
        self._closed = threading.Event()
        self._settled = threading.Event()  # something to serve, or a refused key: wait_ready returns
        self._listeners: dict[str, list[Callable[[Any], None]]] = {"change": [], "status": []}
        self._listeners_lock = threading.Lock()
        self._stream_response: StreamResponse | None = None

        if bootstrap is not None:
            try:
                self._swap(dataclasses.replace(parse_snapshot(copy_json(bootstrap)), bootstrap=True), announce=False)
                self._set_status(READY)
            except SnapshotError as err:
                self._logger.warning("flagops: ignoring the bootstrap snapshot: %s", err)

        self._events = EventSender(
            self._transport,
            self._serves,
            lambda attempt: backoff_delay(attempt, self._retry_initial, self._retry_max),
            flush_interval,
            event_queue_size,
            self._logger,
        )
        self._exposures = self._events if send_exposures else None
        self._counts = (
            CountReporter(
                self._transport,
                self._serves,
                lambda attempt: backoff_delay(attempt, self._retry_initial, self._retry_max),
                counts_every,
                self._logger,
            )
            if send_counts
            else None
        )

        self._updater = threading.Thread(target=self._run_updates, name="flagops-updates", daemon=True)
        self._updater.start()
        self._streamer: threading.Thread | None = None
        if stream:
            self._streamer = threading.Thread(target=self._run_stream, name="flagops-stream", daemon=True)
            self._streamer.start()

    # ---- reading flags ----

    @property
    def status(self) -> str:
        """``not_ready``, ``ready``, ``stale`` (serving the last good snapshot, retrying) or ``error``."""
        return self._status

    @property
    def version(self) -> int | None:
        """The version of the snapshot being served, or None before the first one."""
        snapshot = self._snapshot
        return None if snapshot is None else snapshot.version

    def keys(self) -> list[str]:
        snapshot = self._snapshot
        return [] if snapshot is None else snapshot.compiled.keys()

    def boolean(self, flag_key: str, default: bool, context: Mapping[str, Any] | None = None) -> bool:
        return self._value(flag_key, default, context, "boolean")

    def string(self, flag_key: str, default: str, context: Mapping[str, Any] | None = None) -> str:
        return self._value(flag_key, default, context, "string")

    def number(self, flag_key: str, default: float, context: Mapping[str, Any] | None = None) -> float:
        return self._value(flag_key, default, context, "number")

    def json(self, flag_key: str, default: Any, context: Mapping[str, Any] | None = None) -> Any:
        """Any JSON value (a copy: changing it changes nothing the client serves)."""
        return self._value(flag_key, default, context, "any")

    def details(self, flag_key: str, default: Any, context: Mapping[str, Any] | None = None) -> EvaluationDetails:
        """The whole result; the value must have the type of ``default`` (None accepts any)."""
        result, code, message = self._resolve(flag_key, context, kind_of(default))
        if result is None:
            return error_details(flag_key, default, code, message)
        value = result["value"]
        if value is None and result["reason"] == "archived":
            return EvaluationDetails(flag_key, default, "archived", "default")
        return from_result(flag_key, result, copy_json(value))

    def evaluate(self, flag_key: str, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The result exactly as one entry of ``POST /v1/evaluate``'s answer, or an ``error`` result."""
        result, code, message = self._resolve(flag_key, context, "any", found_only=False)
        if result is None:
            return {"value": None, "reason": "error", "errorCode": code, "errorMessage": message}
        result["value"] = copy_json(result["value"])
        return result

    def _value(self, flag_key: str, default: Any, context: Mapping[str, Any] | None, kind: str) -> Any:
        result = self._resolve(flag_key, context, kind)[0]
        if result is None:
            return default
        value = result["value"]
        if value is None and result["reason"] == "archived":
            return default  # an archived flag without a defaultValue: the code's own fallback is the better default
        return copy_json(value) if type(value) is dict or type(value) is list else value

    def _resolve(self, flag_key: str, context: Any, kind: str, found_only: bool = True) -> tuple[dict | None, str, str]:
        """(the core's result, "", "") or (None, errorCode, message); one place for every way a read fails."""
        snapshot = self._snapshot
        if snapshot is None:
            return None, PROVIDER_NOT_READY, "no snapshot has been loaded yet"
        if context is not None:
            problem = context_problem(context)
            if problem is not None:
                return None, INVALID_CONTEXT, problem
        user_id, attributes = split_context(context)
        try:
            result = snapshot.compiled.evaluate(flag_key, user_id, attributes)
        except Exception as err:  # never raise at the caller
            return None, GENERAL, f"{type(err).__name__}: {err}"
        reason = result["reason"]
        if reason == "flag_not_found":
            return (None, FLAG_NOT_FOUND, f"this environment has no flag {flag_key}") if found_only else (result, "", "")
        value = result["value"]
        if kind != "any" and not (value is None and reason == "archived") and not matches(value, kind):
            wanted = "an object or array" if kind == "object" else f"a {kind}"
            return None, TYPE_MISMATCH, f"flag {flag_key} is {describe(value)}, not {wanted}"
        counts = self._counts
        if counts is not None:
            counts.count(flag_key, result["variation"])
        exposures = self._exposures
        if exposures is not None:
            key = (flag_key, result["variation"], user_id)
            if key not in exposures.seen:  # a repeat in this window, the common case, costs only this look-up
                exposures.expose(key)
        return result, "", ""

    def _serves(self, flag_key: str, variation: str) -> bool:
        """Whether the snapshot served now has the flag and it can serve this variation (a queued exposure still applies)."""
        snapshot = self._snapshot
        flag = None if snapshot is None else snapshot.compiled.flags.get(flag_key)
        if flag is None:
            return False
        return variation in ("on", "off", "default") or any(v.name == variation for v in flag.variants or ())

    # ---- track events ----

    def track(self, name: str, context: Mapping[str, Any] | None = None, value: float | None = None) -> None:
        """
        Records that the context's user did ``name`` (1 to 128 letters, digits, '.', '_', ':' or '-', starting
        with a letter or digit), with an optional ``value`` from -1e9 to 1e9 that the stats add up per name. It
        is sent with ``POST /v1/events`` in the next batch; a name or value the server would refuse is dropped
        here with a warning, so that it cannot cost the rest of its batch.
        """
        problem = check_track(name, value)
        if problem is None and context is not None:
            problem = context_problem(context)
        if problem is not None:
            self._logger.warning("flagops: track: %s: dropped", problem)
            self._events.count_dropped()
            return
        user_id = split_context(context)[0]
        self._events.track(name, user_id, None if value is None else float(value))

    @property
    def event_stats(self) -> EventStats:
        """Events sent (accepted), dropped (a full queue, a flag gone, unsendable at close) and rejected (4xx)."""
        return self._events.stats

    # ---- events ----

    def on_change(self, listener: Callable[[ChangeEvent], None]) -> Callable[[], None]:
        """Calls ``listener(ChangeEvent)`` after each new snapshot is served; returns a function that removes it."""
        return self._on("change", listener)

    def on_status(self, listener: Callable[[StatusEvent], None]) -> Callable[[], None]:
        return self._on("status", listener)

    def _on(self, kind: str, listener: Callable[[Any], None]) -> Callable[[], None]:
        with self._listeners_lock:
            self._listeners[kind] = [*self._listeners[kind], listener]

        def remove() -> None:
            with self._listeners_lock:
                self._listeners[kind] = [x for x in self._listeners[kind] if x is not listener]

        return remove

    def _emit(self, kind: str, event: Any) -> None:
        for listener in self._listeners[kind]:
            try:
                listener(event)
            except Exception:  # one listener's failure is not the others' or the client's
                self._logger.exception("flagops: a %s listener raised", kind)

    def _set_status(self, status: str, error: str | None = None, refused: bool = False) -> None:
        with self._status_lock:
            previous = self._status
            self._status = status
        if status in (READY, STALE) or refused:
            self._settled.set()
        if status != previous:
            self._emit("status", StatusEvent(status, previous, error))

    # ---- life ----

    def wait_ready(self, timeout: float = 5.0) -> str:
        """Waits until there is something to serve or the key is refused, at most ``timeout`` seconds; the status."""
        self._settled.wait(timeout)
        return self._status

    def refresh(self) -> None:
        """Asks the updater to check for a new snapshot now."""
        with self._wake:
            self._refresh_wanted = True
            self._wake.notify_all()

    def close(self) -> None:
        """
        Stops the threads and the stream and sends the queued events and evaluation counts; evaluation keeps
        answering from the last snapshot. Idempotent.
        """
        if self._closed.is_set():
            return
        self._closed.set()
        self._settled.set()
        with self._wake:
            self._wake.notify_all()
        self._transport.stop_reads()  # a server that accepts but never answers must not hold close() for the timeout
        response = self._stream_response
        if response is not None:
            response.cut()
        # Cut, the threads end at once; one still connecting (to an address that drops packets) is a daemon
        # thread left to end by itself, since it serves nothing more.
        deadline = time.monotonic() + _THREADS_GRACE
        for thread in (self._updater, self._streamer):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._events.close()
        if self._counts is not None:
            self._counts.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- updates ----

    def _swap(self, snapshot: Snapshot, announce: bool = True) -> None:
        """Serves ``snapshot`` (the caller holds the swap lock, or is the constructor) and tells the listeners."""
        previous = self._snapshot
        self._snapshot = snapshot
        if announce and previous is not None and self._listeners["change"]:
            keys = changed_keys(previous, snapshot)
            if keys:
                self._emit("change", ChangeEvent(keys, snapshot.version))

    def _refresh_once(self) -> None:
        """
        One conditional request; a delta is applied to the snapshot it follows, anything older is dropped. A
        bootstrap is replaced by the whole snapshot, asked for without naming its version.
        """
        held = self._snapshot
        patchable = None if held is None or held.bootstrap else held
        body = self._transport.get_snapshot(
            since=None if patchable is None else patchable.version, etag=None if patchable is None else patchable.etag
        )
        if body is None or self._closed.is_set():
            return
        with self._swap_lock:
            current = self._snapshot
            if is_delta(body):
                if current is None or current.bootstrap or body.get("since") != current.version:
                    # Another update got in first: ask again from what is held now.
                    with self._wake:
                        self._refresh_wanted = True
                    return
                self._swap(apply_delta(current, body))
                self._logger.debug("flagops: version %s from a delta", body.get("version"))
                return
            snapshot = parse_snapshot(body)
            if current is None or current.bootstrap or snapshot.version != current.version:
                self._swap(snapshot)
                self._logger.debug("flagops: version %s from the full snapshot", snapshot.version)

    def _run_updates(self) -> None:
        failures = 0  # in a row, until a refresh succeeds
        answered = 0  # of those, the ones the server answered (or that timed out): they double the delay
        retry_in = 0.0
        chased = False
        while not self._closed.is_set():
            try:
                self._refresh_once()
                failures = answered = 0
                if not self._closed.is_set():
                    self._set_status(READY)
                held, announced = self._snapshot, self._announced
                if held is not None and announced is not None and announced > held.version and not chased:
                    chased = True  # once: a server lagging behind its stream is not asked again and again
                    with self._wake:  # the stream announced a newer version than the answer had
                        self._refresh_wanted = True
                else:
                    chased = False
            except Exception as err:
                if self._closed.is_set():
                    return
                failures += 1
                answered = 0 if connection_lost(err) else answered + 1
                retry_in = retry_delay(err, answered, self._retry_initial, self._retry_max)
                refused = isinstance(err, HttpError) and err.refused
                status = ERROR if refused or self._snapshot is None else STALE
                if failures == 1 or self._status != status:
                    self._logger.warning("flagops: could not update the snapshot: %s", err)
                self._set_status(status, str(err), refused)
            with self._wake:
                if failures > 0:
                    delay: float | None = retry_in
                elif self._stream_up:
                    delay = None  # the stream announces every change
                else:
                    delay = self._poll_interval
                deadline = None if delay is None else time.monotonic() + delay
                while not self._refresh_wanted and not self._closed.is_set():
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        break
                    self._wake.wait(remaining)
                self._refresh_wanted = False

    def _run_stream(self) -> None:
        drops = answered = 0
        while not self._closed.is_set():
            refused = opened = False
            try:
                held = self._snapshot
                since = None if held is None or held.bootstrap else held.version
                response = self._transport.open_stream(since, self._idle_timeout)
                self._stream_response = response
                if self._closed.is_set():
                    response.cut()
                    return
                drops = answered = 0
                opened = True
                with self._wake:
                    self._stream_up = True
                    if self._status in (STALE, ERROR):  # healthy again: a pending retry is better done now
                        self._refresh_wanted = True
                        self._wake.notify_all()
                decoder = codecs.getincrementaldecoder("utf-8")("replace")
                parser = SseParser(self._on_stream_event)
                for chunk in response.chunks():
                    parser.push(decoder.decode(chunk))
                error: Exception = ConnectionError("the server ended the stream")
            except Exception as err:
                error = err
                refused = isinstance(err, HttpError) and err.refused
            finally:
                response = self._stream_response
                self._stream_response = None
                if response is not None:
                    response.cut()
            if self._closed.is_set():
                return
            drops += 1
            if drops == 1:
                self._logger.warning("flagops: the flag stream dropped; polling until it is back: %s", error)
            with self._wake:
                self._stream_up = False
                self._refresh_wanted = True  # find out at once whether the server is still there
                self._wake.notify_all()
            if refused:
                delay = self._retry_max
            elif opened:  # the server may be restarting, and a reconnection it refuses costs it nothing
                delay = reconnect_delay(self._retry_initial, self._retry_max)
            else:
                answered = 0 if connection_lost(error) else answered + 1
                delay = retry_delay(error, answered, self._retry_initial, self._retry_max)
            self._closed.wait(delay)

    def _on_stream_event(self, event: SseEvent) -> None:
        if event.event != "version":
            return
        try:
            data = json.loads(event.data)
            version = data["version"]
        except (ValueError, KeyError, TypeError):
            self._logger.warning("flagops: ignoring a version event that is not JSON: %r", event.data)
            return
        if not isinstance(version, int) or isinstance(version, bool):
            return
        if self._announced is None or version > self._announced:
            self._announced = version
        held = self._snapshot
        if held is not None and held.bootstrap:
            self.refresh()  # the whole snapshot replaces a bootstrap: no patch applies to it
            return
        if held is not None and version == held.version:
            return
        if held is None and self._status == NOT_READY:
            return  # the first request is under way; the updater follows up if it got an older version
        patch = data.get("patch")
        if held is not None and isinstance(patch, dict) and data.get("since") == held.version:
            with self._swap_lock:
                if self._snapshot is held:
                    try:
                        self._swap(apply_delta(held, {**patch, "version": version, "since": held.version}))
                        self._logger.debug("flagops: version %s from a stream patch", version)
                        self._set_status(READY)
                        return
                    except SnapshotError as err:
                        self._logger.warning("flagops: could not apply a stream patch, fetching instead: %s", err)
        self.refresh()
