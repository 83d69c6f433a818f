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
