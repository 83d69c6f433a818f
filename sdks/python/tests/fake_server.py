"""
A local evaluation API on http.server for the transport tests: it serves snapshots the test sets (ETag, 304,
gzip, ?since= deltas), holds /v1/stream connections open and writes the events the test sends on them.
"""

from __future__ import annotations

import gzip
import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

KEY = "svc_sdk_test"


class FakeEvalServer:
    def __init__(self) -> None:
        self.snapshots: dict[int, dict] = {}  # version -> full snapshot; the highest is current
        self.deltas = True  # answer ?since= with a delta when the version is known
        self.fail_with: int | None = None  # answer every snapshot request with this status
        self.requests: list[dict] = []
        self.streams: list[queue.Queue] = []
        self.stream_requests: list[dict] = []
        self.event_batches: list[list[dict]] = []  # what POST /v1/events took, in order
        self.event_requests = 0
        self.event_fail: list[int] = []
        self.count_reports: list[list[dict]] = []  # what POST /v1/counts took, in order
        self.count_fail: list[int] = []  # statuses to answer the next count reports with
        self.problems: list[str] = []  # events the real server would refuse  # statuses to answer the next event requests with
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                seen = {"path": url.path, "query": query, "headers": dict(self.headers)}
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self.reply(401, {"error": {"code": "unauthorized", "message": "no valid SDK key"}})
                if url.path == "/v1/snapshot":
                    with server.lock:
                        server.requests.append(seen)
                    return self.snapshot(query)
                if url.path == "/v1/stream":
                    with server.lock:
                        server.stream_requests.append(seen)
                    return self.stream()
                return self.reply(404, {"error": {"code": "not_found", "message": url.path}})

            def do_POST(self):
                url = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Authorization") != f"Bearer {KEY}":
                    return self.reply(401, {"error": {"code": "unauthorized", "message": "no valid SDK key"}})
                if url.path == "/v1/counts":
                    return self.counts(json.loads(body))
                if url.path != "/v1/events":
                    return self.reply(404, {"error": {"code": "not_found", "message": url.path}})
                with server.lock:
                    server.event_requests += 1
                    if server.event_fail:
                        return self.reply(server.event_fail.pop(0), {"error": {"code": "unavailable", "message": "down"}})
                    events = json.loads(body)["events"]
                    problem = events_problem(events)
                    if problem:
                        server.problems.append(problem)
                        return self.reply(400, {"error": {"code": "invalid_input", "message": problem}})
                    server.event_batches.append(events)
                return self.reply(202, {"accepted": len(events)})

            def counts(self, body):
                with server.lock:
                    if server.count_fail:
                        return self.reply(server.count_fail.pop(0), {"error": {"code": "unavailable", "message": "down"}})
                    problem = counts_problem(body.get("counts"))
                    if problem:
                        server.problems.append(problem)
                        return self.reply(400, {"error": {"code": "invalid_input", "message": problem}})
                    server.count_reports.append(body["counts"])
                return self.reply(202, {"accepted": len(body["counts"])})

            def reply(self, status, body, headers=None):
                data = json.dumps(body).encode()
                if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    data = gzip.compress(data)
                    headers = {**(headers or {}), "Content-Encoding": "gzip"}
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def snapshot(self, query):
                if server.fail_with is not None:
                    return self.reply(server.fail_with, {"error": {"code": "unavailable", "message": "down"}})
                with server.lock:
                    version = max(server.snapshots)
                    current = server.snapshots[version]
                etag = f'"v{version}"'
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                since = int(query["since"][0]) if "since" in query else None
                if since is not None and server.deltas and since in server.snapshots:
                    return self.reply(200, delta(server.snapshots[since], current), {"ETag": etag})
                return self.reply(200, current, {"ETag": etag})

            def stream(self):
                events: queue.Queue = queue.Queue()
                with server.lock:
                    server.streams.append(events)
                    version = max(server.snapshots)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()  # no length: the body lasts until the connection closes
                self.close_connection = True
                try:
                    self.wfile.write(f'retry: 1000\n\nid: {version}\nevent: version\ndata: {{"version":{version}}}\n\n'.encode())
                    self.wfile.flush()
                    while True:
                        text = events.get()
                        if text is None:
                            return
                        self.wfile.write(text.encode())
                        self.wfile.flush()
                except OSError:
                    pass
                finally:
                    with server.lock:
                        if events in server.streams:
                            server.streams.remove(events)

        self._handler = Handler
        self._listen(0)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _listen(self, port: int) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), self._handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def start_again(self) -> None:
        """Serves again on the port :meth:`stop` freed, with the snapshots it had."""
        self._listen(self.httpd.server_address[1])

    def events(self) -> list[dict]:
        with self.lock:
            return [e for batch in self.event_batches for e in batch]

    def counts(self) -> dict[str, int]:
        """What count reports took, summed per "flag/variation"."""
        totals: dict[str, int] = {}
        with self.lock:
            for report in self.count_reports:
                for e in report:
                    key = f"{e['flagKey']}/{e['variation']}"
                    totals[key] = totals.get(key, 0) + e["count"]
        return totals

    def publish(self, snapshot: dict) -> None:
        with self.lock:
            self.snapshots[snapshot["version"]] = snapshot

    def send(self, text: str) -> None:
        """Writes raw event-stream text on every open stream."""
        with self.lock:
            streams = list(self.streams)
        for events in streams:
            events.put(text)

    def announce(self, version: int, since: int | None = None, patch: dict | None = None) -> None:
        data: dict = {"version": version}
        if since is not None:
            data["since"] = since
            if patch is not None:
                data["patch"] = patch
        self.send(f"id: {version}\nevent: version\ndata: {json.dumps(data)}\n\n")

    def drop_streams(self) -> None:
        self.send_none()

    def send_none(self) -> None:
        with self.lock:
            streams = list(self.streams)
        for events in streams:
            events.put(None)

    def open_streams(self) -> int:
        with self.lock:
            return len(self.streams)

    def stop(self) -> None:
        """Stops as a restart does: the streams end and nothing listens on the port any more."""
        self.drop_streams()
        self.httpd.shutdown()
        self.httpd.server_close()


def events_problem(events: list) -> str | None:
    """What the real server's schema would refuse in a POST /v1/events body, or None."""
    from datetime import datetime

    if len(events) > 1000:
        return f"{len(events)} events in one request"
    for e in events:
        fields = {"exposure": {"type", "flagKey", "variation", "userId", "at"}, "track": {"type", "name", "userId", "value", "at"}}.get(e.get("type"))
        if fields is None or not set(e) <= fields:
            return f"an event the server refuses: {e}"
        need = ("flagKey", "variation") if e["type"] == "exposure" else ("name",)
        if not all(isinstance(e.get(f), str) and e[f] for f in need):
            return f"an event without {need}: {e}"
        if "at" in e:
            try:
                datetime.fromisoformat(e["at"].replace("Z", "+00:00"))
            except ValueError:
                return f"at is not ISO-8601: {e}"
    return None


def counts_problem(counts: object) -> str | None:
    """What the real server would refuse in a POST /v1/counts body, or None."""
    if not isinstance(counts, list) or len(counts) > 1000:
        return "counts must be an array of at most 1000 entries"
    seen = set()
    for e in counts:
        if not isinstance(e, dict) or set(e) != {"flagKey", "variation", "hour", "count"}:
            return f"an entry the server refuses: {e}"
        if not isinstance(e["count"], int) or not 1 <= e["count"] <= 1_000_000:
            return f"a count out of bounds: {e}"
        if not isinstance(e["hour"], str) or not e["hour"].endswith(":00:00.000Z"):
            return f"hour is not the start of an hour: {e}"
        cell = (e["flagKey"], e["variation"], e["hour"])
        if cell in seen:
            return f"a cell twice in one report: {e}"
        seen.add(cell)
    return None


def patch_between(old: dict, new: dict) -> dict:
    """The flags/segments object that takes ``old`` to ``new``: changed entries, and None for removed ones."""
    out = {}
    for field in ("flags", "segments"):
        a, b = old.get(field) or {}, new.get(field) or {}
        out[field] = {k: b.get(k) for k in set(a) | set(b) if a.get(k) != b.get(k)}
    return out


def delta(old: dict, new: dict) -> dict:
    return {"version": new["version"], "environment": new["environment"], "since": old["version"], **patch_between(old, new)}


def flag(value_on="blue", value_off="grey", **overrides) -> dict:
    return {"enabled": True, "rolloutPct": 100, "valueOn": value_on, "valueOff": value_off, "rules": [], "killed": False,
            "archived": False, "defaultValue": None, **overrides}


def snapshot(version: int, flags: dict, segments: dict | None = None) -> dict:
    return {"version": version, "environment": "prod", "flags": flags, "segments": segments or {}}
