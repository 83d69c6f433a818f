"""Deltas and patches: applying one to the snapshot it follows gives exactly the full snapshot of its version."""

import random

import pytest

from fake_server import delta, flag, snapshot
from flagops.store import SnapshotError, apply_delta, changed_keys, parse_snapshot

SEGMENT = {"userIds": ["u1"], "conditions": []}


def results(snap, contexts):
    return {k: [snap.compiled.evaluate(k, u, a) for u, a in contexts] for k in snap.compiled.keys()}


def test_a_delta_gives_the_full_snapshot_of_its_version():
    rng = random.Random(7)
    contexts = [(f"u{i}", {"plan": rng.choice(["pro", "free"])}) for i in range(40)]
    segments = {"beta": {"userIds": ["u1", "u2"], "conditions": []}, "pro": {"userIds": [], "conditions": [{"attribute": "plan", "op": "eq", "value": "pro"}]}}
    flags = {
        f"f{i}": flag(True, False, rolloutPct=rng.choice([0, 30, 100]),
                      rules=[{"id": "r", "conditions": [{"op": "in_segment", "value": rng.choice(["beta", "pro"])}], "serve": "on"}])
        for i in range(20)
    }
    flags["dep"] = flag(True, False, prerequisites=[{"flag": "f0", "variation": "on"}])
    old = snapshot(1, flags, segments)
    new_flags = dict(flags)
    new_flags["f1"] = flag(True, False, killed=True)
    del new_flags["f2"]
    new_flags["f99"] = flag("x", "y")
    new_flags["f0"] = flag(True, False, enabled=False)
    new = snapshot(2, new_flags, {"beta": {"userIds": ["u3"], "conditions": []}})  # "pro" removed, "beta" changed
    applied = apply_delta(parse_snapshot(old), delta(old, new))
    full = parse_snapshot(new)
    assert applied.version == 2
    assert sorted(applied.compiled.keys()) == sorted(full.compiled.keys())
    assert results(applied, contexts) == results(full, contexts)


def test_a_delta_that_follows_another_version_is_refused():
    held = parse_snapshot(snapshot(3, {"a": flag()}))
    with pytest.raises(SnapshotError):
        apply_delta(held, {"version": 5, "since": 4, "flags": {}, "segments": {}})


def test_changed_keys_follow_segments_and_prerequisites():
    old = parse_snapshot(snapshot(1, {
        "seg": flag(rules=[{"id": "r", "conditions": [{"op": "in_segment", "value": "beta"}], "serve": "on"}]),
        "base": flag(), "child": flag(prerequisites=[{"flag": "base", "variation": "on"}]), "same": flag(),
    }, {"beta": SEGMENT}))
    new = apply_delta(old, {"version": 2, "since": 1, "flags": {"base": flag(killed=True)}, "segments": {"beta": {"userIds": [], "conditions": []}}})
    assert changed_keys(old, new) == ["base", "child", "seg"]


@pytest.mark.parametrize("body", [None, [], {"version": "1", "flags": {}}, {"version": 1, "flags": []}, {"version": 1, "flags": {"a": 3}}])
def test_malformed_snapshots_are_refused(body):
    with pytest.raises(SnapshotError):
        parse_snapshot(body)
