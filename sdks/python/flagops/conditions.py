"""
Conditions, compiled once per snapshot into small functions ``holds(user_id, attributes) -> bool``.

``user_id`` is the context's userId (None when absent) and ``attributes`` its attributes (a dict, empty when
absent). An attribute missing from the context makes every condition false, ``neq`` and ``not_in`` included;
an unknown operator or an operand of the wrong type matches nothing (fail closed).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from .jsonvalue import as_double, is_scalar, scalar_key
from .semver import parse_semver

Holds = Callable[[Any, Mapping[str, Any]], bool]

_MISSING = object()


def _never(user_id: Any, attributes: Mapping[str, Any]) -> bool:
    return False


def _reader(attribute: str) -> Callable[[Any, Mapping[str, Any]], Any]:
    """Reads the tested value: ``userId`` is the context's userId first, then ``attributes.userId``."""
    if attribute == "userId":

        def read_user_id(user_id: Any, attributes: Mapping[str, Any]) -> Any:
            return user_id if user_id is not None else attributes.get("userId", _MISSING)

        return read_user_id

    def read(user_id: Any, attributes: Mapping[str, Any]) -> Any:
        return attributes.get(attribute, _MISSING)

    return read


def _finite_number(a: Any) -> float | None:
    if type(a) is float:
        return a if math.isfinite(a) else None
    d = as_double(a)
    return d if d is not None and math.isfinite(d) else None


class _Members:
    """Scalars compared as JavaScript's ``===`` compares them: strings in one set, other scalars by kind."""

    __slots__ = ("strings", "others")

    def __init__(self, values: list) -> None:
        self.strings = frozenset(v for v in values if isinstance(v, str))
        self.others = frozenset(k for k in map(scalar_key, values) if k is not None and k[0] != "s")

    def has(self, a: Any) -> bool:
        if type(a) is str:
            return a in self.strings
        key = scalar_key(a)
        return key is not None and (key[1] in self.strings if key[0] == "s" else key in self.others)


def compile_condition(source: Mapping[str, Any], segments: Mapping[str, "CompiledSegment"] | None) -> Holds:
    """A condition as a function of (user_id, attributes); ``segments`` resolves segment conditions (None: never hold)."""
    op = source.get("op")
    value = source.get("value")
    if op in ("in_segment", "not_in_segment"):
        segment = segments.get(value) if segments is not None and isinstance(value, str) else None
        if segment is None:  # an unknown segment fails closed, for both operators
            return _never
        if op == "in_segment":
            return segment.contains
        return lambda user_id, attributes: not segment.contains(user_id, attributes)

    attribute = source.get("attribute")
    read = _reader(str(attribute) if attribute is not None else "")
    missing = _MISSING

    if op in ("eq", "neq", "contains"):
        if not is_scalar(value):
            return _never
        expected = scalar_key(value)
        if op == "eq":
            if isinstance(value, str):
                s = str(value)

                def eq_string(user_id: Any, attributes: Mapping[str, Any]) -> bool:
                    a = read(user_id, attributes)
                    return a == s and isinstance(a, str)

                return eq_string

            def eq(user_id: Any, attributes: Mapping[str, Any]) -> bool:
                return scalar_key(read(user_id, attributes)) == expected

            return eq
        if op == "neq":

            def neq(user_id: Any, attributes: Mapping[str, Any]) -> bool:
                key = scalar_key(read(user_id, attributes))
                return key is not None and key != expected

            return neq

        def contains(user_id: Any, attributes: Mapping[str, Any]) -> bool:
            a = read(user_id, attributes)
            if isinstance(a, str):
                return expected[0] == "s" and expected[1] in a
            if isinstance(a, (list, tuple)):
                return any(scalar_key(x) == expected for x in a)
            return False

        return contains

    if op in ("in", "not_in"):
        if not isinstance(value, list):
            return _never
        members = _Members([v for v in value if is_scalar(v)])
        has = members.has
        if op == "in":

            def in_(user_id: Any, attributes: Mapping[str, Any]) -> bool:
                a = read(user_id, attributes)
                return a is not missing and has(a)

            return in_

        def not_in(user_id: Any, attributes: Mapping[str, Any]) -> bool:
            a = read(user_id, attributes)
            return a is not missing and is_scalar(a) and not has(a)

        return not_in

    if op in ("gt", "gte", "lt", "lte"):
        n = _finite_number(value)
        if n is None:
            return _never
        compare = {
            "gt": lambda a: a > n,
            "gte": lambda a: a >= n,
            "lt": lambda a: a < n,
            "lte": lambda a: a <= n,
        }[op]

        def number(user_id: Any, attributes: Mapping[str, Any]) -> bool:
            a = _finite_number(read(user_id, attributes))
            return a is not None and compare(a)

        return number

    if op in ("semver_eq", "semver_gt", "semver_lt"):
        v = parse_semver(value) if isinstance(value, str) else None
        if v is None:
            return _never
        sign = {"semver_eq": 0, "semver_gt": 1, "semver_lt": -1}[op]

        def semver(user_id: Any, attributes: Mapping[str, Any]) -> bool:
            a = read(user_id, attributes)
            if type(a) is not str:
                return False
            k = parse_semver(a)
            if k is None:
                return False
            return (k > v) - (k < v) == sign

        return semver

    return _never


class CompiledSegment:
    """A segment: its user ids in a set (10,000 are looked up, not scanned), and its attribute conditions."""

    __slots__ = ("user_ids", "conditions")

    def __init__(self, source: Mapping[str, Any]) -> None:
        ids = source.get("userIds") or []
        self.user_ids = frozenset(i for i in ids if isinstance(i, str))
        # A segment's conditions test attributes only; a segment condition inside one never holds.
        self.conditions = tuple(compile_condition(c, None) for c in (source.get("conditions") or []) if isinstance(c, Mapping))

    def contains(self, user_id: Any, attributes: Mapping[str, Any]) -> bool:
        """Whether the context is in the segment: its user id is listed, or there are conditions and all hold."""
        uid = user_id if user_id is not None else attributes.get("userId")
        if isinstance(uid, str) and uid in self.user_ids:
            return True
        if not self.conditions:
            return False
        for holds in self.conditions:
            if not holds(user_id, attributes):
                return False
        return True
