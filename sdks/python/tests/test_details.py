"""Typed helpers: the caller's default with reason error instead of an exception, values that cannot be changed through."""

import pytest

from fake_server import KEY, flag, snapshot
from flagops import Client

BOOT = snapshot(1, {
    "on": flag(True, False),
    "text": flag("blue", "grey"),
    "count": flag(3, 0),
    "config": flag({"limits": [1, 2]}, {}),
    "gone": flag(True, False, archived=True),
    "old": flag(True, False, archived=True, defaultValue=False),
    "rolled": flag(True, False, rolloutPct=50),
})


@pytest.fixture
def flags():
    # Nothing listens on port 9: the client serves its bootstrap and never reaches a server.
    client = Client("http://127.0.0.1:9", KEY, bootstrap=BOOT, stream=False, retry_initial=5, retry_max=5)
    yield client
    client.close()


def test_typed_values(flags):
    assert flags.boolean("on", False) is True
    assert flags.string("text", "x") == "blue"
    assert flags.number("count", 0) == 3
    assert flags.json("config", None) == {"limits": [1, 2]}


def test_errors_give_the_default(flags):
    cases = {
        ("missing", "FLAG_NOT_FOUND"): flags.details("missing", "dflt"),
        ("text", "TYPE_MISMATCH"): flags.details("text", False),
        ("on", "TYPE_MISMATCH"): flags.details("on", 1),  # a boolean is not a number
        ("on", "INVALID_CONTEXT"): flags.details("on", False, {"userId": 5}),
        ("on", "INVALID_CONTEXT "): flags.details("on", False, {"user": "u1"}),
    }
    for (key, code), details in cases.items():
        assert details.reason == "error" and details.error_code == code.strip(), (key, details)
        assert details.openfeature_reason == "ERROR"
    assert flags.boolean("text", True) is True


def test_an_archived_flag_without_a_default_serves_the_callers(flags):
    assert flags.details("gone", "mine").value == "mine"
    assert flags.details("gone", "mine").reason == "archived"
    assert flags.details("old", True).value is False


def test_details_carry_the_result_and_openfeature_fields(flags):
    d = flags.details("rolled", False, {"userId": "user-1"})
    assert d.reason == "rollout" and d.bucket is not None and d.variant in ("on", "off")
    assert d.openfeature_reason == "SPLIT"
    assert d.flag_metadata == {"flagopsReason": "rollout", "bucket": d.bucket}
    assert d.to_dict() == {"value": d.value, "reason": "rollout", "variation": d.variation, "bucket": d.bucket}
    assert flags.evaluate("rolled", {"userId": "user-1"}) == d.to_dict()


def test_served_values_are_copies(flags):
    flags.json("config", None)["limits"].append(3)
    flags.evaluate("config")["value"]["limits"].append(4)
    assert flags.json("config", None) == {"limits": [1, 2]}


def test_not_ready_before_any_snapshot():
    client = Client("http://127.0.0.1:9", KEY, stream=False, retry_initial=5, retry_max=5)
    try:
        assert client.details("on", True).error_code == "PROVIDER_NOT_READY"
        assert client.boolean("on", True) is True
    finally:
        client.close()


def test_wrong_options_raise_at_once():
    with pytest.raises(ValueError):
        Client("ftp://x", KEY)
    with pytest.raises(ValueError):
        Client("http://x", "")
    with pytest.raises(ValueError):
        Client("http://x", KEY, poll_interval=0)
