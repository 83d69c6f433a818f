"""A bootstrap is served until the first refresh, which replaces it whole: nothing says its content is the server's."""

import pytest

from fake_server import KEY, FakeEvalServer, flag, patch_between, snapshot
from flagops import Client
from test_client import eventually


@pytest.fixture
def server():
    s = FakeEvalServer()
    s.publish(snapshot(726, {"c": flag(True, False), "d": flag(True, False)}))
    yield s
    s.stop()


def client_for(server, **options):
    return Client(server.url, KEY, retry_initial=0.05, retry_max=0.2, **options)


def test_a_bootstrap_of_another_environment_at_the_same_version_is_replaced(server):
    dev = {**snapshot(726, {"c": flag(True, False), "d": flag(True, False, enabled=False)}), "environment": "dev"}
    with client_for(server, bootstrap=dev, poll_interval=60) as flags:
        eventually(lambda: flags.boolean("d", False) is True, what="the server's d served")
        assert flags.status == "ready" and flags.version == 726
        first = server.requests[0]
        assert first["query"] == {} and "If-None-Match" not in first["headers"]
        eventually(lambda: server.stream_requests, what="the stream opened")
        assert server.stream_requests[0]["query"] == {}


def test_a_stream_patch_is_not_applied_to_a_bootstrap(server):
    tampered = snapshot(726, {"c": flag(True, False), "d": flag(True, False, killed=True)})
    server.fail_with = 503  # the first refresh fails: the patch comes while the bootstrap is served
    with client_for(server, bootstrap=tampered, poll_interval=60) as flags:
        eventually(lambda: server.open_streams() == 1, what="the stream opened")
        killed = snapshot(727, {"c": flag(True, False, killed=True), "d": flag(True, False)})
        server.publish(killed)
        server.announce(727, since=726, patch=patch_between(server.snapshots[726], killed))
        server.fail_with = None
        eventually(
            lambda: flags.version == 727 and flags.status == "ready" and flags.boolean("d", False) is True,
            what="the server's snapshot served",
        )
        assert flags.evaluate("c")["reason"] == "killed"


@pytest.mark.parametrize(
    "entries, named",
    [
        ({"flags": {"b": flag(1, 0, rules="x")}}, "flags.b"),
        ({"flags": {"b": flag(1, 0, rules=[{"conditions": 5, "serve": "on"}])}}, "flags.b"),
        ({"flags": {"b": flag(1, 0, rules=[5])}}, "flags.b"),
        ({"flags": {"b": flag(1, 0, variants=[5])}}, "flags.b"),
        ({"flags": {"b": flag(1, 0, prerequisites=["x"])}}, "flags.b"),
        ({"flags": {"b": flag(1, 0)}, "segments": {"s": {"userIds": 5}}}, "segments.s"),
        ({"flags": {"b": 5}}, "flags.b"),
        ({"flags": {"b": flag(1, 0, enabled="yes")}}, "flags.b.enabled is not a boolean"),
        ({"flags": {"b": flag(1, 0, rolloutPct="all")}}, "flags.b.rolloutPct is not a finite number"),
        ({"flags": {"b": flag(1, 0, prerequisites=[{"flag": 7, "variation": "on"}])}}, "flags.b.prerequisites[0].flag"),
        ({"flags": {"b": flag(1, 0)}, "segments": {"s": {"userIds": [5]}}}, "segments.s.userIds[0] is not a string"),
    ],
)
def test_a_malformed_bootstrap_is_ignored_with_a_warning_and_the_server_serves(server, caplog, entries, named):
    bootstrap = {"version": 1, "environment": "prod", "segments": {}, **entries}
    with client_for(server, bootstrap=bootstrap) as flags:  # never raises: the application starts
        assert any("ignoring the bootstrap snapshot" in r.getMessage() and named in r.getMessage() for r in caplog.records)
        assert flags.wait_ready(5) == "ready"
        assert flags.version == 726
