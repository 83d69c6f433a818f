"""
HTTP to the evaluation API with the standard library: the snapshot (If-None-Match, gzip, ``?since=`` deltas)
and the ``/v1/stream`` connection, which another thread can cut at any moment by shutting its socket. Closing
cuts the snapshot and stream requests under way the same way, so a server that never answers does not hold it.
"""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import threading
import zlib
from typing import Any, Iterator
from urllib.parse import urlsplit

from . import __version__

USER_AGENT = f"flagops-python/{__version__}"


class HttpError(Exception):
    """The server answered with an error status, or not as the API says."""

    def __init__(self, status: int, message: str, code: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after  # seconds the server asked to wait before trying again (Retry-After)

    @property
    def refused(self) -> bool:
        """The SDK key was refused: retrying soon will not help."""
        return self.status in (401, 403)


def connection_lost(err: BaseException) -> bool:
    """
    Whether a request got no answer because the connection was refused or reset (or closed before the answer
    was whole): nothing listens there now, the server is restarting, so trying again soon costs it nothing.
    """
    return isinstance(err, (ConnectionRefusedError, ConnectionResetError, BrokenPipeError, http.client.IncompleteRead))


def _retry_after(value: str | None) -> float | None:
    value = (value or "").strip()
    return float(value) if value.isdigit() else None


def _error(status: int, what: str, body: bytes, retry_after: str | None = None) -> HttpError:
    code = message = None
    try:
        parsed = json.loads(body)
        err = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(err, dict):
            code, message = err.get("code"), err.get("message")
    except ValueError:
        pass
    message = f"{what} answered {status}" + (f" {code}: {message}" if code else "")
    return HttpError(status, message, code, _retry_after(retry_after))


def _decode(body: bytes, encoding: str | None) -> bytes:
    encoding = (encoding or "identity").strip().lower()
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    if encoding != "identity":
        raise HttpError(200, f"the server sent Content-Encoding {encoding}, which was not asked for")
    return body


class Transport:
    def __init__(self, eval_url: str, sdk_key: str, timeout: float) -> None:
        parts = urlsplit(eval_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("flagops: eval_url must be an http(s) URL")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._base = parts.path.rstrip("/")
        self._sdk_key = sdk_key
        self._timeout = timeout
        self._reads_lock = threading.Lock()
        self._reads: set[http.client.HTTPConnection] = set()  # snapshot and stream requests waiting for an answer
        self._reads_stopped = False

    def _connection(self, timeout: float | None) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=timeout)

    def _read_connection(self) -> http.client.HTTPConnection:
        """
        A connected connection for a snapshot or stream request, which :meth:`stop_reads` cuts: a request that
        connects after it is refused here instead, so none can slip past it and wait for the whole timeout.
        """
        conn = self._connection(self._timeout)
        conn.connect()
        with self._reads_lock:
            if self._reads_stopped:
                conn.close()
                raise ConnectionError("the client is closing")
            self._reads.add(conn)
        return conn

    def _read_done(self, conn: http.client.HTTPConnection) -> None:
        with self._reads_lock:
            self._reads.discard(conn)

    def stop_reads(self) -> None:
        """
        Cuts the snapshot and stream requests under way (their readers get an error at once) and refuses new
        ones. Events and counts are still sent: closing sends the last of them.
        """
        with self._reads_lock:
            self._reads_stopped = True
            reads = list(self._reads)
        for conn in reads:
            try:
                if conn.sock is not None:
                    conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _headers(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._sdk_key}", "User-Agent": USER_AGENT, **extra}

    def get_snapshot(self, since: int | None = None, etag: str | None = None) -> Any | None:
        """
        GET /v1/snapshot (with ``?since=`` when given): the parsed body, or None for 304 (``etag`` is current).
        The body is a full snapshot or, when it has ``since``, a delta.
        """
        path = f"{self._base}/v1/snapshot" + (f"?since={since}" if since is not None else "")
        headers = self._headers(Accept="application/json", **{"Accept-Encoding": "gzip"})
        if etag is not None:
            headers["If-None-Match"] = etag
        conn = self._read_connection()
        try:
            conn.request("GET", path, headers=headers)
            res = conn.getresponse()
            body = res.read()
            if res.status == 304:
                return None
            if res.status != 200:
                raise _error(res.status, "GET /v1/snapshot", body, res.getheader("Retry-After"))
            try:
                return json.loads(_decode(body, res.getheader("Content-Encoding")))
            except (ValueError, OSError, zlib.error) as err:
                raise HttpError(200, f"GET /v1/snapshot answered a body that is not JSON: {err}") from None
        finally:
            self._read_done(conn)
            conn.close()

    def post_events(self, events: list) -> tuple[int, str]:
        """POST /v1/events: the status and the start of the answer; OSError when no answer came."""
        return self._post("/v1/events", {"events": events})

    def post_counts(self, counts: list) -> tuple[int, str]:
        """POST /v1/counts: the status and the start of the answer; OSError when no answer came."""
        return self._post("/v1/counts", {"counts": counts})

    def _post(self, path: str, payload: dict) -> tuple[int, str]:
        body = json.dumps(payload, separators=(",", ":")).encode()
        conn = self._connection(self._timeout)
        try:
            conn.request("POST", f"{self._base}{path}", body=body, headers=self._headers(**{"Content-Type": "application/json"}))
            res = conn.getresponse()
            return res.status, res.read(4096).decode("utf-8", "replace").strip()
        except http.client.HTTPException as err:  # a broken answer: as good as none
            raise ConnectionError(f"POST {path}: {err!r}") from None
        finally:
            conn.close()

    def open_stream(self, since: int | None, idle_timeout: float) -> "StreamResponse":
        """Opens GET /v1/stream; reading it raises ``socket.timeout`` after ``idle_timeout`` seconds of silence."""
        path = f"{self._base}/v1/stream" + (f"?since={since}" if since is not None else "")
        conn = self._read_connection()
        try:
            conn.request("GET", path, headers=self._headers(Accept="text/event-stream", **{"Cache-Control": "no-cache"}))
            sock = conn.sock  # kept: the connection lets go of it once the response, read to the end, owns it
            res = conn.getresponse()
            if res.status != 200:
                raise _error(res.status, "GET /v1/stream", res.read(), res.getheader("Retry-After"))
            kind = res.getheader("Content-Type") or ""
            if not kind.startswith("text/event-stream"):
                raise HttpError(200, f"GET /v1/stream answered {kind or 'no content type'}")
            if sock is not None:
                sock.settimeout(idle_timeout)  # any byte, heartbeats included, proves the connection alive
            return StreamResponse(conn, res, sock)
        except BaseException:
            conn.close()
            raise
        finally:
            self._read_done(conn)  # an open stream is cut through its StreamResponse


class StreamResponse:
    """An open event stream; :meth:`cut` ends it from any thread, waking a reader blocked on it."""

    def __init__(self, conn: http.client.HTTPConnection, res: http.client.HTTPResponse, sock: socket.socket | None) -> None:
        self._conn = conn
        self._res = res
        self._sock = sock
        self._lock = threading.Lock()
        self._closed = False

    def chunks(self) -> Iterator[bytes]:
        """The bytes as they arrive, until the server ends the stream."""
        while True:
            chunk = self._res.read1(65536)
            if not chunk:
                return
            yield chunk

    def cut(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            if self._sock is not None:
                self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._res.close()
        self._conn.close()
