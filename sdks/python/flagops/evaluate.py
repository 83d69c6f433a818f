"""
Evaluation: a snapshot's flags compiled once, then evaluated for a context in this order: killed, archived,
disabled, prerequisites, the rules top-down, the rollout (with variants wherever valueOn would be served).

A result is a dict shaped like one entry of ``POST /v1/evaluate``: ``value``, ``reason``, ``variation`` and,
where they apply, ``ruleId``, ``bucket``, ``variantBucket``, ``prerequisiteKey``. Compiled flags never change
after compiling, so one environment can be read by any number of threads while another is being built.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping

from .conditions import CompiledSegment, compile_condition
from .jsonvalue import as_double
from .murmur3 import Murmur3State, absorb, resume


def _number(v: Any) -> float:
    """A rolloutPct as a number; anything else (a snapshot is input like any other) serves like 0."""
    d = as_double(v)
    return d if d is not None and not math.isnan(d) else 0.0


def _hundredths(weight: Any) -> int:
    """A variant's weight in whole hundredths (at most two decimals), so cumulative sums are exact."""
    d = as_double(weight)
    return math.floor(d * 100 + 0.5) if d is not None and d > 0 else 0


_NO_KEYS: frozenset = frozenset()


class CompiledVariant:
    __slots__ = ("name", "value", "up_to", "weighted")

    def __init__(self, source: Mapping[str, Any], up_to: int) -> None:
        self.name = str(source.get("name"))
        self.value = source.get("value")
        self.up_to = up_to  # served for variant buckets (in hundredths) below this cumulative weight
        d = as_double(source.get("weight"))
        self.weighted = d is not None and d > 0


class CompiledRule:
    __slots__ = ("id", "serve_on", "variant", "has_rollout", "rollout_pct", "conditions")

    def __init__(self, source: Mapping[str, Any], variants: tuple | None, segments: Mapping[str, CompiledSegment]) -> None:
        self.id = source.get("id")
        serve = source.get("serve")
        self.serve_on = serve == "on"
        # A name that is no variant (refused at write time) serves valueOff: fail closed.
        self.variant = None
        if not self.serve_on and serve != "off" and variants is not None:
            self.variant = next((v for v in variants if v.name == serve), None)
        pct = source.get("rolloutPct")
        self.has_rollout = as_double(pct) is not None
        self.rollout_pct = _number(pct) if self.has_rollout else 0.0
        self.conditions = tuple(compile_condition(c, segments) for c in (source.get("conditions") or []))


class CompiledFlag:
    """One flag of a snapshot, prepared once so that evaluation only reads fields. Never changed afterwards."""

    __slots__ = (
        "key",
        "source",
        "killed",
        "archived",
        "enabled",
        "rollout_pct",
        "value_on",
        "value_off",
        "default_value",
        "rules",
        "variants",
        "first_weighted",
        "prerequisites",
        "segment_keys",
        "prefix",
        "variant_prefix",
    )

    def __init__(self, key: str, source: Mapping[str, Any], segments: Mapping[str, CompiledSegment]) -> None:
        self.key = key
        self.source = source
        self.killed = source.get("killed") is True
        self.archived = source.get("archived") is True
        self.enabled = source.get("enabled") is True
        self.rollout_pct = _number(source.get("rolloutPct"))
        self.value_on = source.get("valueOn")
        self.value_off = source.get("valueOff")
        self.default_value = source.get("defaultValue")
        variants = source.get("variants")
        if isinstance(variants, list) and variants:
            compiled = []
            up_to = 0
            for v in variants:
                up_to += _hundredths(v.get("weight"))
                compiled.append(CompiledVariant(v, up_to))
            self.variants: tuple | None = tuple(compiled)
        else:
            self.variants = None
        self.first_weighted = next((v for v in self.variants if v.weighted), None) if self.variants else None
        rules = source.get("rules") or []
        self.rules = tuple(CompiledRule(r, self.variants, segments) for r in rules)
        prerequisites = source.get("prerequisites")
        self.prerequisites = (
            tuple((str(p.get("flag")), p.get("variation")) for p in prerequisites) if isinstance(prerequisites, list) and prerequisites else None
        )
        named = [
            c.get("value")
            for r in rules
            for c in (r.get("conditions") or [])
            if c.get("op") in ("in_segment", "not_in_segment") and isinstance(c.get("value"), str)
        ]
        self.segment_keys = frozenset(named) if named else _NO_KEYS  # shared: most flags name no segment
        self.prefix: Murmur3State = absorb(key + "/")
        # Only a flag with variants hashes "<key>/variant/<userId>"; the others keep no state for it.
        self.variant_prefix: Murmur3State | None = absorb(key + "/variant/") if self.variants is not None else None


def _serve_on(flag: CompiledFlag, reason: str, user_id: str | None) -> dict:
    """Where the config serves valueOn: with variants, the one the variant bucket picks (the first weighted without a user)."""
    variants = flag.variants
    if variants is None:
        return {"value": flag.value_on, "reason": reason, "variation": "on"}
    if user_id is None:
        first = flag.first_weighted
        if first is None:
            return {"value": flag.value_on, "reason": reason, "variation": "on"}
        return {"value": first.value, "reason": reason, "variation": first.name}
    h = resume(flag.variant_prefix, user_id) % 10000
    variant = next((v for v in variants if h < v.up_to), None) or flag.first_weighted
    if variant is None:
        return {"value": flag.value_on, "reason": reason, "variation": "on"}
    return {"value": variant.value, "reason": reason, "variation": variant.name, "variantBucket": h / 100}


def _serve_rule(flag: CompiledFlag, rule: CompiledRule, user_id: str | None, b: float) -> dict:
    if rule.serve_on:
        result = _serve_on(flag, "rule_match", user_id)
    elif rule.variant is not None:
        result = {"value": rule.variant.value, "reason": "rule_match", "variation": rule.variant.name}
    else:
        result = {"value": flag.value_off, "reason": "rule_match", "variation": "off"}
    if rule.id is not None:
        result["ruleId"] = rule.id
    if b >= 0:
        result["bucket"] = b
    return result


class MalformedEntry(ValueError):
    """A flag or segment entry that cannot be compiled: its fields are not shaped as the API says."""


def _compiled(where: str, build: Callable[[], Any]) -> Any:
    # A snapshot is input like any other: whatever an entry's shape makes compiling raise is that entry's fault.
    try:
        return build()
    except Exception as err:  # noqa: BLE001
        raise MalformedEntry(f"{where} is not shaped as the API says ({type(err).__name__}: {err})") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_FIELD_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "boolean": (lambda v: isinstance(v, bool), "a boolean"),
    "number": (_is_number, "a finite number"),
    "string": (lambda v: isinstance(v, str), "a string"),
}


def _check_fields(where: str, entry: Mapping[str, Any], fields: Mapping[str, str]) -> None:
    # Absent fields are left to the defaults; present ones must have the type the API gives them, or an entry
    # such as enabled: "yes" would compile into a flag no configuration says.
    for field, kind in fields.items():
        test, named = _FIELD_TYPES[kind]
        if field in entry and not test(entry[field]):
            raise MalformedEntry(f"{where}.{field} is not {named}")


def _check_list(where: str, value: Any, fields: Mapping[str, str]) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise MalformedEntry(f"{where} is not a list")
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise MalformedEntry(f"{where}[{i}] is not an object")
        _check_fields(f"{where}[{i}]", item, fields)


def _check_flag_shape(key: str, entry: Mapping[str, Any]) -> None:
    where = f"flags.{key}"
    _check_fields(where, entry, {"enabled": "boolean", "killed": "boolean", "archived": "boolean", "rolloutPct": "number"})
    _check_list(f"{where}.rules", entry.get("rules"), {"rolloutPct": "number"})
    for i, rule in enumerate(entry.get("rules") or []):
        _check_list(f"{where}.rules[{i}].conditions", rule.get("conditions"), {})
    _check_list(f"{where}.variants", entry.get("variants"), {"name": "string", "weight": "number"})
    _check_list(f"{where}.prerequisites", entry.get("prerequisites"), {"flag": "string", "variation": "string"})


def _compile_flag(key: str, entry: Mapping[str, Any], segments: Mapping[str, CompiledSegment]) -> CompiledFlag:
    _check_flag_shape(key, entry)
    return _compiled(f"flags.{key}", lambda: CompiledFlag(key, entry, segments))


def _compile_segment(key: str, entry: Mapping[str, Any]) -> CompiledSegment:
    user_ids = entry.get("userIds")
    if isinstance(user_ids, list):
        for i, user_id in enumerate(user_ids):
            if not isinstance(user_id, str):
                raise MalformedEntry(f"segments.{key}.userIds[{i}] is not a string")
    return _compiled(f"segments.{key}", lambda: CompiledSegment(entry))


class CompiledEnvironment:
    """
    An environment's flags and segments, compiled. Evaluating only reads it, so threads share it freely; a
    new snapshot builds a new one, reusing the compiled flags that did not change (see :meth:`updated`).
    """

    __slots__ = ("flags", "segments", "links")

    def __init__(self, flags: Mapping[str, CompiledFlag], segments: Mapping[str, CompiledSegment]) -> None:
        self.flags = flags
        self.segments = segments
        self.links = _link_prerequisites(flags)

    @classmethod
    def compile(cls, flags: Mapping[str, Any], segments: Mapping[str, Any] | None = None) -> "CompiledEnvironment":
        compiled_segments = {k: _compile_segment(k, s) for k, s in (segments or {}).items()}
        return cls({k: _compile_flag(k, f, compiled_segments) for k, f in flags.items()}, compiled_segments)

    def updated(self, flags: Mapping[str, Any | None], segments: Mapping[str, Any | None]) -> "CompiledEnvironment":
        """
        This environment with a delta applied: ``flags``/``segments`` map keys to new entries or None (removed).
        Only the changed flags, and those whose rules name a changed segment, are compiled again.
        """
        compiled_segments = dict(self.segments)
        for key, segment in segments.items():
            if segment is None:
                compiled_segments.pop(key, None)
            else:
                compiled_segments[key] = _compile_segment(key, segment)
        changed_segments = set(segments)
        compiled = dict(self.flags)
        for key, entry in flags.items():
            if entry is None:
                compiled.pop(key, None)
            else:
                compiled[key] = _compile_flag(key, entry, compiled_segments)
        if changed_segments:
            for key, flag in list(compiled.items()):
                if key not in flags and flag.segment_keys & changed_segments:
                    compiled[key] = CompiledFlag(key, flag.source, compiled_segments)
        return CompiledEnvironment(compiled, compiled_segments)

    def keys(self) -> list[str]:
        return list(self.flags)

    def evaluate(self, flag_key: str, user_id: str | None, attributes: Mapping[str, Any], killed_keys: Iterable[str] | None = None) -> dict:
        """
        One flag's result for a context (``user_id`` None when absent, ``attributes`` a dict). ``killed_keys``
        is the server's kill overlay: when given it alone decides "killed"; SDKs leave it out and the snapshot's
        ``killed`` fields decide.
        """
        flag = self.flags.get(flag_key)
        if flag is None:
            return {"value": None, "reason": "flag_not_found"}
        if killed_keys is not None and not isinstance(killed_keys, (set, frozenset)):
            killed_keys = frozenset(killed_keys)
        killed = flag.killed if killed_keys is None else flag_key in killed_keys
        return self._evaluate(flag, user_id, attributes, killed, killed_keys, None)

    def _evaluate(self, flag: CompiledFlag, user_id: Any, attributes: Mapping[str, Any], killed: bool, killed_keys: Any, memo: dict | None) -> dict:
        if killed:
            return {"value": flag.value_off, "reason": "killed", "variation": "off"}
        if flag.archived:
            return {"value": flag.default_value, "reason": "archived", "variation": "default"}
        if not flag.enabled:
            return {"value": flag.value_off, "reason": "flag_disabled", "variation": "off"}
        if flag.prerequisites is not None:
            failed = self._failed_prerequisite(flag, user_id, attributes, killed_keys, {} if memo is None else memo)
            if failed is not None:
                return {"value": flag.value_off, "reason": "prerequisite_failed", "variation": "off", "prerequisiteKey": failed}

        # An empty or non-string id would put every anonymous caller in one bucket: it counts as no userId.
        uid = user_id if isinstance(user_id, str) and user_id else None
        b = -1.0  # one bucket per evaluation, computed when first needed
        for rule in flag.rules:
            for holds in rule.conditions:
                if not holds(user_id, attributes):
                    break
            else:
                if not rule.has_rollout:
                    return _serve_rule(flag, rule, uid, -1.0)
                if uid is None:
                    continue
                if b < 0:
                    b = resume(flag.prefix, uid) % 10000 / 100
                if b < rule.rollout_pct:
                    return _serve_rule(flag, rule, uid, b)

        pct = flag.rollout_pct
        if pct >= 100:
            return _serve_on(flag, "default", uid)
        if not pct > 0:
            return {"value": flag.value_off, "reason": "default", "variation": "off"}
        if uid is None:
            return {"value": flag.value_off, "reason": "rollout", "variation": "off"}
        if b < 0:
            b = resume(flag.prefix, uid) % 10000 / 100
        if b >= pct:
            return {"value": flag.value_off, "reason": "rollout", "variation": "off", "bucket": b}
        result = _serve_on(flag, "rollout", uid)
        result["bucket"] = b
        return result

    def _failed_prerequisite(self, flag: CompiledFlag, user_id: Any, attributes: Mapping[str, Any], killed_keys: Any, memo: dict) -> str | None:
        """The key of the first prerequisite not serving its variation for this context, or None when all do."""
        links = self.links.get(flag.key, ())
        for (key, variation), required in zip(flag.prerequisites, links):
            if required is None:
                return key
            if required.key in memo:
                served = memo[required.key]
            else:
                killed = required.killed if killed_keys is None else required.key in killed_keys
                served = self._evaluate(required, user_id, attributes, killed, killed_keys, memo).get("variation")
                memo[required.key] = served
            if served != variation:
                return key
        return None


def _link_prerequisites(flags: Mapping[str, CompiledFlag]) -> dict[str, tuple]:
    """
    Per flag with prerequisites, the compiled flag each one names, or None when the environment has no such flag
    or following it would close a cycle (refused at write time, but a snapshot is input like any other): such a
    prerequisite fails, so evaluation always terminates.
    """
    links: dict[str, list] = {}
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(flag: CompiledFlag) -> None:
        state[flag.key] = 1
        targets = []
        links[flag.key] = targets
        for key, _ in flag.prerequisites or ():
            target = flags.get(key)
            if target is None or state.get(key) == 1:
                targets.append(None)
                continue
            targets.append(target)
            if key not in state:
                visit(target)
        state[flag.key] = 2

    for flag in flags.values():
        if flag.prerequisites is not None and flag.key not in state:
            visit(flag)
    return {k: tuple(v) for k, v in links.items()}
