"""The client against a local evaluation API: polling, the stream, patches and deltas, errors, closing."""

import socket
import threading
import time

import pytest

from fake_server import KEY, FakeEvalServer, flag, patch_between, snapshot
from flagops import Client
from flagops.client import backoff_delay, retry_delay
from flagops.transport import HttpError


def eventually(predicate, timeout=5.0, what="the condition"):
    """Waits for ``predicate()`` to be true, failing after ``timeout`` seconds (a deadline, not a measurement)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"{what} did not happen within {timeout} s")


@pytest.fixture
def server():
    s = FakeEvalServer()
    s.publish(snapshot(1, {"banner": flag("Spring sale", "Welcome"), "checkout": flag(True, False)}))
    yield s
    s.stop()


def client_for(server, **options):
    options.setdefault("retry_initial", 0.05)
    options.setdefault("retry_max", 0.2)
    return Client(server.url, KEY, **options)


def test_loads_the_snapshot_with_the_key_and_gzip(server):
    with client_for(server) as flags:
        assert flags.wait_ready(5) == "ready"
        assert flags.version == 1
        assert flags.string("banner", "x") == "Spring sale"
        assert flags.boolean("checkout", False) is True
        first = server.requests[0]
        assert first["headers"]["Authorization"] == f"Bearer {KEY}"
        assert "gzip" in first["headers"]["Accept-Encoding"]
        assert sorted(flags.keys()) == ["banner", "checkout"]


def test_polls_with_if_none_match_and_keeps_the_snapshot_on_304(server):
    with client_for(server, stream=False, poll_interval=0.05) as flags:
        flags.wait_ready(5)
        eventually(lambda: len(server.requests) >= 3, what="three polls")
        assert server.requests[1]["headers"].get("If-None-Match") == '"v1"'
        assert server.requests[1]["query"] == {"since": ["1"]}
        assert flags.version == 1
        server.publish(snapshot(2, {"banner": flag("Summer sale", "Welcome")}))
        eventually(lambda: flags.version == 2, what="version 2 by polling")
        assert flags.string("banner", "x") == "Summer sale"
        assert flags.keys() == ["banner"]


def test_a_stream_patch_following_the_held_version_is_applied_without_a_request(server):
    with client_for(server) as flags:
        flags.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        before = len(server.requests)
        v2 = snapshot(2, {"banner": flag("Spring sale", "Welcome", killed=True), "checkout": flag(True, False)})
        server.publish(v2)
        server.announce(2, since=1, patch=patch_between(server.snapshots[1], v2))
        eventually(lambda: flags.version == 2, what="the patch")
        details = flags.details("banner", "x")
        assert (details.value, details.reason) == ("Welcome", "killed")
        assert len(server.requests) == before


def test_an_announcement_it_cannot_patch_fetches_a_delta_since_the_held_version(server):
    with client_for(server) as flags:
        flags.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        server.publish(snapshot(2, {"banner": flag("A", "Welcome"), "checkout": flag(True, False)}))
        server.publish(snapshot(3, {"banner": flag("B", "Welcome"), "checkout": flag(True, False)}))
        server.announce(3, since=2, patch={"flags": {"banner": flag("B", "Welcome")}, "segments": {}})  # follows 2, not 1
        eventually(lambda: flags.version == 3, what="the delta")
        assert flags.string("banner", "x") == "B"
        assert {"since": ["1"]} in [r["query"] for r in server.requests[1:]]


def test_without_deltas_the_full_snapshot_is_served(server):
    server.deltas = False
    with client_for(server) as flags:
        flags.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        server.publish(snapshot(2, {"checkout": flag(True, False, enabled=False)}))
        server.announce(2)
        eventually(lambda: flags.version == 2, what="the full snapshot")
        assert flags.keys() == ["checkout"]
        assert flags.details("checkout", True).reason == "flag_disabled"


def test_change_events_name_the_flags_that_changed_and_their_dependants(server):
    server.publish(snapshot(1, {"base": flag(True, False), "child": flag(True, False, prerequisites=[{"flag": "base", "variation": "on"}]),
                               "other": flag(True, False)}))
    events = []
    with client_for(server) as flags:
        flags.on_change(events.append)
        flags.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        v2 = snapshot(2, {"base": flag(True, False, killed=True), "child": server.snapshots[1]["flags"]["child"], "other": flag(True, False)})
        server.publish(v2)
        server.announce(2, since=1, patch=patch_between(server.snapshots[1], v2))
        eventually(lambda: events, what="a change event")
        assert events[0].keys == ["base", "child"]
        assert events[0].version == 2
        assert flags.details("child", True).reason == "prerequisite_failed"


def test_the_last_good_snapshot_is_served_through_errors(server):
    statuses = []
    with client_for(server, stream=False, poll_interval=0.05) as flags:
        flags.on_status(lambda e: statuses.append(e.status))
        flags.wait_ready(5)
        server.fail_with = 503
        eventually(lambda: flags.status == "stale", what="stale")
        assert flags.string("banner", "x") == "Spring sale"
        server.fail_with = None
        server.publish(snapshot(2, {"banner": flag("Back", "Welcome")}))
        eventually(lambda: flags.version == 2 and flags.status == "ready", what="recovery")
        assert statuses[-2:] == ["stale", "ready"]


def test_a_refused_key_is_an_error_at_once():
    s = FakeEvalServer()
    s.publish(snapshot(1, {}))
    try:
        with Client(s.url, "svc_sdk_wrong", retry_initial=0.05, retry_max=0.2) as flags:
            assert flags.wait_ready(5) == "error"
            details = flags.details("banner", "fallback")
            assert (details.value, details.reason, details.error_code) == ("fallback", "error", "PROVIDER_NOT_READY")
    finally:
        s.stop()


def test_the_stream_reconnects_from_the_held_version(server):
    with client_for(server) as flags:
        flags.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        server.drop_streams()
        eventually(lambda: len(server.stream_requests) >= 2 and server.open_streams() == 1, what="a reconnect")
        assert server.stream_requests[-1]["query"] == {"since": ["1"]}
        server.publish(snapshot(2, {"banner": flag("Again", "Welcome")}))
        server.announce(2)
        eventually(lambda: flags.version == 2, what="an update over the new stream")


def test_a_server_restarted_on_the_same_port_is_found_within_a_second(server):
    # A first retry of 5 to 10 s: a client backing off while nothing listens would still be waiting after the restart.
    slow_backoff = {"retry_initial": 10.0, "retry_max": 20.0, "send_counts": False}
    with client_for(server, **slow_backoff) as running:
        running.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        server.stop()
        eventually(lambda: running.status == "stale", what="stale")
        with client_for(server, **slow_backoff) as started:  # an application started while the server is down
            time.sleep(2.5)  # the outage: every reconnection is refused meanwhile

            server.start_again()
            back = time.monotonic()
            server.publish(snapshot(2, {"banner": flag("Spring sale", "Welcome"), "checkout": flag(True, False, killed=True)}))

            def within(seconds, predicate, what):
                while not predicate():
                    assert time.monotonic() - back < seconds, f"{what}: not within {seconds} s of the restart"
                    time.sleep(0.005)

            within(1.5, lambda: running.boolean("checkout", True) is False, "the kill made at once is served")
            within(1.5, lambda: started.status == "ready" and started.boolean("checkout", True) is False, "the client started meanwhile is ready")
            within(2.0, lambda: server.open_streams() == 2, "both streams are open again")


def test_events_split_anywhere_across_reads_still_arrive(server):
    with client_for(server) as flags:
        flags.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        server.publish(snapshot(2, {"banner": flag("Split", "Welcome")}))
        text = 'id: 2\r\nevent: version\r\ndata: {"version":2}\r\n\r\n'
        for part in (text[:3], text[3:15], text[15:40], text[40:]):
            server.send(part)
            time.sleep(0.01)
        eventually(lambda: flags.version == 2, what="the split event")


def test_close_stops_every_thread_and_keeps_answering(server):
    flags = client_for(server)
    flags.wait_ready(5)
    eventually(lambda: server.open_streams() == 1, what="the stream")
    flags.close()
    assert not flags._updater.is_alive() and not flags._streamer.is_alive()
    assert not [t for t in threading.enumerate() if t.name.startswith("flagops-")]
    assert flags.string("banner", "x") == "Spring sale"
    flags.close()  # twice is fine


def test_close_does_not_wait_for_a_server_that_never_answers():
    # A listener that accepts connections (the kernel does, from its backlog) and never answers a request.
    with socket.create_server(("127.0.0.1", 0), backlog=16) as silent:
        flags = Client(f"http://127.0.0.1:{silent.getsockname()[1]}", KEY, send_counts=False, request_timeout=10.0)
        assert flags.wait_ready(0.5) == "not_ready"
        started = time.monotonic()
        flags.close()
        assert time.monotonic() - started < 1.0  # not the 10 s request timeout
        assert not flags._updater.is_alive() and not flags._streamer.is_alive()


def test_evaluations_from_many_threads_see_whole_snapshots(server):
    # Each version serves the same value on both flags; a reader seeing them differ saw half an update.
    def both(n):
        return snapshot(n, {"a": flag(f"v{n}", "off"), "b": flag(f"v{n}", "off")})

    server.publish(both(1))
    with client_for(server) as flags:
        flags.wait_ready(5)
        eventually(lambda: server.open_streams() == 1, what="the stream")
        torn = []
        stop = threading.Event()

        def read():
            while not stop.is_set():
                snap = flags._snapshot
                a = snap.compiled.evaluate("a", None, {})["value"]
                b = snap.compiled.evaluate("b", None, {})["value"]
                if a != b:
                    torn.append((a, b))

        readers = [threading.Thread(target=read) for _ in range(4)]
        for r in readers:
            r.start()
        for n in range(2, 40):
            server.publish(both(n))
            server.announce(n, since=n - 1, patch=patch_between(server.snapshots[n - 1], server.snapshots[n]))
            eventually(lambda: flags.version == n, what=f"version {n}")
        stop.set()
        for r in readers:
            r.join()
        assert torn == []
        assert flags.string("a", "x") == "v39"


def test_bootstrap_serves_at_once():
    with Client("http://127.0.0.1:9", KEY, bootstrap=snapshot(5, {"banner": flag("Boot", "x")}), retry_initial=0.05, retry_max=0.1) as flags:
        assert flags.wait_ready(0) in ("ready", "stale")  # served at once, whatever the first request did
        assert flags.string("banner", "y") == "Boot"
        eventually(lambda: flags.status == "stale", what="stale once the server cannot be reached")


def test_backoff_doubles_with_equal_jitter():
    assert backoff_delay(1, 1, 60, lambda: 0) == 0.5
    assert backoff_delay(3, 1, 60, lambda: 0.999999) == pytest.approx(4, rel=1e-5)
    assert backoff_delay(30, 1, 60, lambda: 0) == 30


def test_a_lost_connection_is_retried_within_a_second_and_retry_after_is_followed():
    high = lambda: 0.999999  # noqa: E731
    for lost in (ConnectionRefusedError(111, "refused"), ConnectionResetError(104, "reset")):
        assert retry_delay(lost, 0, 1.0, 10.0, high) == pytest.approx(1.0, rel=1e-5)
    assert retry_delay(ConnectionRefusedError(), 0, 0.1, 10.0, high) == pytest.approx(0.1, rel=1e-5)
    assert retry_delay(HttpError(503, "starting", retry_after=1.0), 6, 1.0, 10.0, high) == 1.0
    assert retry_delay(HttpError(429, "busy", retry_after=60.0), 1, 1.0, 10.0, high) == 10.0
    assert retry_delay(HttpError(500, "failing"), 3, 1.0, 10.0, high) == pytest.approx(4.0, rel=1e-5)
    assert retry_delay(TimeoutError(), 6, 1.0, 10.0, high) == pytest.approx(10.0, rel=1e-5)
