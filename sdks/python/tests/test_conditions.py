"""Conditions with JavaScript's strict equality and doubles, where Python's own would answer otherwise."""

import math

import pytest

from flagops.conditions import CompiledSegment, compile_condition


def holds(op, value, attribute_value, attribute="a", user_id=None):
    condition = compile_condition({"attribute": attribute, "op": op, "value": value}, None)
    return condition(user_id, {} if attribute_value is ... else {attribute: attribute_value})


@pytest.mark.parametrize(
    "op,value,attr,expected",
    [
        ("eq", 1, True, False),  # true is not 1, though Python says True == 1
        ("eq", True, 1, False),
        ("eq", 1, 1.0, True),  # one number in JSON
        ("eq", 0, -0.0, True),
        ("eq", None, None, True),
        ("eq", "1", 1, False),
        ("eq", 9007199254740992, 9007199254740993, True),  # the same double, as the server reads both
        ("neq", 1, True, True),
        ("neq", "x", ..., False),  # a missing attribute fails neq too
        ("neq", "x", ["y"], False),  # and so does a non-scalar
        ("in", [1, "a"], True, False),
        ("in", [True], 1, False),
        ("in", [1.0], 1, True),
        ("in", list(range(20)), 7.0, True),
        ("in", list(range(20)), True, False),
        ("in", [None], None, True),
        ("in", ["a", ["b"]], ["b"], False),  # members are scalars only
        ("not_in", [True], 1, True),
        ("not_in", ["a"], ..., False),
        ("not_in", ["a"], {"b": 1}, False),
        ("contains", "ell", "hello", True),
        ("contains", "", "hello", True),
        ("contains", 1, [True, "1"], False),
        ("contains", 1, [2, 1.0], True),
        ("contains", 1, "1", False),
        ("contains", "a", {"a": 1}, False),
        ("gt", 2, 3, True),
        ("gt", 2, True, False),
        ("gt", 2, "3", False),
        ("gt", 2, math.inf, False),  # not finite
        ("gt", 2, math.nan, False),
        ("gt", 2, 10**400, False),  # JSON.parse reads it as Infinity
        ("gte", 2, 2.0, True),
        ("lt", 2, -(10**400), False),
        ("lte", 2.5, 2.5, True),
        ("gt", "2", 3, False),  # an operand of the wrong type matches nothing
        ("semver_gt", "2.0.0", "2.0.1", True),
        ("semver_gt", "2.0.0", "2.0.0-rc.1", False),
        ("semver_eq", "2.0.0", "2.0.0+build", True),
        ("semver_lt", "2.0.0", "v1.0.0", False),
        ("semver_lt", "2.0.0", 1, False),
        ("semver_gt", "not a version", "2.0.0", False),
        ("unknown", 1, 1, False),
    ],
)
def test_condition(op, value, attr, expected):
    assert holds(op, value, attr) is expected


def test_user_id_reads_the_context_user_id_first():
    condition = compile_condition({"attribute": "userId", "op": "eq", "value": "u1"}, None)
    assert condition("u1", {"userId": "other"})
    assert condition(None, {"userId": "u1"})
    assert not condition("u2", {"userId": "u1"})


def test_segments():
    segment = CompiledSegment({"userIds": ["u1", 7], "conditions": [{"attribute": "plan", "op": "eq", "value": "pro"}]})
    segments = {"beta": segment}
    in_beta = compile_condition({"op": "in_segment", "value": "beta"}, segments)
    not_in_beta = compile_condition({"op": "not_in_segment", "value": "beta"}, segments)
    unknown = compile_condition({"op": "not_in_segment", "value": "nope"}, segments)
    assert in_beta("u1", {})
    assert in_beta(None, {"plan": "pro"})
    assert not in_beta("u2", {"plan": "free"})
    assert not in_beta(None, {"userId": 7})  # listed ids are strings
    assert not_in_beta("u2", {})
    assert not unknown("u2", {})
