"""
The snapshot a client serves: its version, and its flags and segments compiled. Each update makes a new
:class:`Snapshot` (a full snapshot, or a delta applied to the one held) and the client swaps it in by
reference, so an evaluation in another thread reads either the old one or the new one, whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .evaluate import CompiledEnvironment, MalformedEntry


class SnapshotError(ValueError):
    """A snapshot or delta that cannot be served; the client keeps the one it has."""


@dataclass(frozen=True)
class Snapshot:
    version: int
    environment: str | None
    compiled: CompiledEnvironment
    segments: Mapping[str, Any]
    # The caller's bootstrap: nothing says its content is what the server served at its version (it may even be
    # another environment's), so no delta or patch applies to it and no request names its version.
    bootstrap: bool = False

    @property
    def etag(self) -> str:
        return f'"v{self.version}"'


def _version(body: Mapping[str, Any], field: str = "version") -> int:
    v = body.get(field)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise SnapshotError(f"the snapshot's {field} is not a version number")
    return v


def _entries(body: Mapping[str, Any], field: str, nullable: bool) -> dict:
    entries = body.get(field)
    if entries is None and field == "segments":
        return {}
    if not isinstance(entries, dict):
        raise SnapshotError(f"the snapshot's {field} is not an object")
    for key, entry in entries.items():
        if not (isinstance(entry, dict) or (nullable and entry is None)):
            raise SnapshotError(f"{field}.{key} is not an object")
    return entries


def parse_snapshot(body: Any) -> Snapshot:
    """A full snapshot, ``{ version, environment, flags, segments? }``, compiled."""
    if not isinstance(body, dict):
        raise SnapshotError("the snapshot is not a JSON object")
    version = _version(body)
    flags = _entries(body, "flags", nullable=False)
    segments = _entries(body, "segments", nullable=False)
    try:
        compiled = CompiledEnvironment.compile(flags, segments)
    except MalformedEntry as err:
        raise SnapshotError(str(err)) from None
    return Snapshot(version, body.get("environment"), compiled, segments)


def is_delta(body: Any) -> bool:
    return isinstance(body, dict) and "since" in body


def apply_delta(held: Snapshot, body: Mapping[str, Any]) -> Snapshot:
    """
    ``held`` with a delta applied (``{ version, since, flags: {key: entry|null}, segments: {key: segment|null} }``):
    exactly the full snapshot of the delta's version. Raises SnapshotError when it does not follow ``held``.
    """
    if _version(body, "since") != held.version:
        raise SnapshotError(f"the delta follows version {body.get('since')}, not {held.version}")
    version = _version(body)
    flags = _entries(body, "flags", nullable=True) if body.get("flags") is not None else {}
    segments = _entries(body, "segments", nullable=True)
    merged_segments = dict(held.segments)
    for key, segment in segments.items():
        if segment is None:
            merged_segments.pop(key, None)
        else:
            merged_segments[key] = segment
    environment = body.get("environment", held.environment)
    try:
        compiled = held.compiled.updated(flags, segments)
    except MalformedEntry as err:
        raise SnapshotError(str(err)) from None
    return Snapshot(version, environment, compiled, merged_segments)


def changed_keys(old: Snapshot | None, new: Snapshot) -> list[str]:
    """
    The flags whose results may differ between two snapshots: entries added, changed or removed, flags whose
    rules name a changed segment, and (transitively) flags with a changed prerequisite.
    """
    old_flags = old.compiled.flags if old is not None else {}
    new_flags = new.compiled.flags
    changed = {k for k, f in new_flags.items() if (o := old_flags.get(k)) is None or (o is not f and o.source != f.source)}
    changed.update(k for k in old_flags if k not in new_flags)
    old_segments = old.segments if old is not None else {}
    segments = {k for k in set(old_segments) | set(new.segments) if old_segments.get(k) != new.segments.get(k)}
    if segments:
        changed.update(k for k, f in new_flags.items() if f.segment_keys & segments)
    grew = bool(changed)
    while grew:
        grew = False
        for key, flag in new_flags.items():
            if key not in changed and flag.prerequisites and any(p in changed for p, _ in flag.prerequisites):
                changed.add(key)
                grew = True
    return sorted(changed)
