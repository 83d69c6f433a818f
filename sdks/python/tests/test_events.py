"""Exposure and track events against a local evaluation API: windows, batches, retries, the bounded queue."""

import threading
import time
from datetime import datetime

import pytest

from fake_server import KEY, FakeEvalServer, flag, snapshot
from flagops import Client
from test_client import eventually


@pytest.fixture
def server():
    s = FakeEvalServer()
    variants = flag("a", "off", variants=[{"name": "blue", "value": "b", "weight": 50}, {"name": "green", "value": "g", "weight": 50}])
    s.publish(snapshot(1, {"banner": flag("Spring sale", "Welcome"), "checkout": flag(True, False), "theme": variants}))
    yield s
    assert s.problems == []
    s.stop()


def client_for(server, **options):
    options.setdefault("retry_initial", 0.02)
    options.setdefault("retry_max", 0.1)
    options.setdefault("stream", False)
    flags = Client(server.url, KEY, **options)
    assert flags.wait_ready(5) == "ready"
    return flags


def exposures(events):
    return sorted(f"{e['flagKey']}/{e['variation']}/{e.get('userId', '-')}" for e in events if e["type"] == "exposure")


def test_exposures_are_off_by_default(server):
    with client_for(server) as flags:
        flags.boolean("checkout", False, {"userId": "u-1"})
    assert server.events() == []


def test_one_exposure_per_user_flag_and_variation_in_a_window_and_track_events(server):
    before = time.time() - 1
    with client_for(server, send_exposures=True, exposure_flush_interval=3600) as flags:
        for _ in range(5):
            for user in ("u-1", "u-2"):
                flags.boolean("checkout", False, {"userId": user})
                flags.evaluate("theme", {"userId": user})
            flags.string("banner", "x")  # no user: one exposure without userId
        flags.boolean("banner", False, {"userId": "u-1"})  # a type mismatch: the caller's default, no exposure
        flags.boolean("no-such-flag", False, {"userId": "u-1"})
        flags.track("checkout.completed", {"userId": "u-1"}, 12.5)
        flags.track("signup")
        flags.track("bad name!", {"userId": "u-1"})  # refused here rather than costing the batch its 400
        flags.track("big", None, 1e12)
        theme = {u: flags.evaluate("theme", {"userId": u})["variation"] for u in ("u-1", "u-2")}
    assert len(server.event_batches) == 1  # everything on close
    events = server.events()
    assert exposures(events) == sorted(
        ["banner/on/-", "checkout/on/u-1", "checkout/on/u-2", f"theme/{theme['u-1']}/u-1", f"theme/{theme['u-2']}/u-2"]
    )
    assert [(e["name"], e.get("userId"), e.get("value")) for e in events if e["type"] == "track"] == [
        ("checkout.completed", "u-1", 12.5),
        ("signup", None, None),
    ]
    for e in events:
        at = datetime.fromisoformat(e["at"].replace("Z", "+00:00")).timestamp()
        assert before <= at <= time.time()
    assert flags.event_stats.sent == 7 and flags.event_stats.dropped == 2


def test_exposures_are_sent_at_the_end_of_each_window(server):
    with client_for(server, send_exposures=True, exposure_flush_interval=0.03) as flags:
        flags.boolean("checkout", False, {"userId": "u-1"})
        flags.boolean("checkout", False, {"userId": "u-1"})
        eventually(lambda: len(server.events()) == 1, what="the window's exposure without close")
        flags.boolean("checkout", False, {"userId": "u-1"})  # a new window: the same user is exposed again
        eventually(lambda: len(server.events()) == 2, what="the next window's exposure")


def test_a_full_batch_is_sent_at_once_and_no_batch_holds_more_than_1000(server):
    with client_for(server, send_exposures=True, exposure_flush_interval=3600) as flags:
        for i in range(2500):
            flags.boolean("checkout", False, {"userId": f"u-{i}"})
        eventually(lambda: len(server.events()) >= 1000, what="full batches before the window ends")
    assert len(server.events()) == 2500
    assert max(len(b) for b in server.event_batches) <= 1000


def test_retried_after_5xx_but_not_after_400(server):
    server.event_fail = [503, 500]
    with client_for(server, send_exposures=True, exposure_flush_interval=0.02) as flags:
        flags.boolean("checkout", False, {"userId": "u-1"})
        flags.track("clicked", {"userId": "u-1"})
        eventually(lambda: len(server.events()) == 2, what="the events after two failures")
        with server.lock:
            server.event_fail = [400]
        flags.track("clicked", {"userId": "u-2"})
        eventually(lambda: flags.event_stats.rejected == 1, what="the refused batch")
        requests = server.event_requests
        flags.track("clicked", {"userId": "u-3"})
        eventually(lambda: len(server.events()) == 3, what="the next event")
    assert server.events()[-1]["userId"] == "u-3"
    assert server.event_requests == requests + 1  # the refused batch was not sent again
    assert flags.event_stats.sent == 3


def test_a_full_queue_drops_the_oldest_and_counts_them(server):
    server.event_fail = [503]  # the first request fails; the retry waits for close
    with client_for(server, send_exposures=True, exposure_flush_interval=3600, event_queue_size=100, retry_initial=3600, retry_max=3600) as flags:
        for i in range(250):
            flags.boolean("checkout", False, {"userId": f"u-{i:03d}"})
    got = exposures(server.events())
    assert (len(got), got[0], got[-1]) == (100, "checkout/on/u-150", "checkout/on/u-249")
    assert (flags.event_stats.sent, flags.event_stats.dropped) == (100, 150)


def test_exposures_of_a_flag_no_longer_served_are_not_sent(server):
    with client_for(server, send_exposures=True, exposure_flush_interval=3600) as flags:
        flags.boolean("checkout", False, {"userId": "u-1"})
        flags.string("banner", "x", {"userId": "u-1"})
        server.publish(snapshot(2, {"checkout": flag(True, False)}))
        flags.refresh()
        eventually(lambda: flags.version == 2, what="the flag removed")
    assert exposures(server.events()) == ["checkout/on/u-1"]


def test_close_gives_up_on_a_server_that_is_away(server):
    server.event_fail = [503] * 4
    flags = client_for(server, send_exposures=True, exposure_flush_interval=3600, retry_initial=3600, retry_max=3600)
    flags.boolean("checkout", False, {"userId": "u-1"})
    closing = threading.Thread(target=flags.close)
    closing.start()
    closing.join(10)  # three tries a quarter of a second apart, not the hour of retry_max
    assert not closing.is_alive()
    assert (flags.event_stats.sent, flags.event_stats.dropped) == (0, 1)
    assert flags.boolean("checkout", False, {"userId": "after-close"}) is True
