"""
Semantic versions per semver.org 2.0.0, for the semver_eq, semver_gt and semver_lt operators.

Strictly semver.org's grammar: no leading "v", no surrounding spaces, no leading zeros in numeric identifiers;
build metadata is validated and ignored. A version becomes a tuple that Python's tuple order compares with
semver precedence, so a comparison is one tuple comparison.
"""

from __future__ import annotations

import re
from functools import lru_cache

_NUM = r"0|[1-9][0-9]*"
_PRE_ID = r"0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*"
_SEMVER = re.compile(
    rf"({_NUM})\.({_NUM})\.({_NUM})"
    rf"(?:-((?:{_PRE_ID})(?:\.(?:{_PRE_ID}))*))?"
    r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?",
    re.ASCII,
)

# Precedence keys: (major, minor, patch, release, prerelease identifiers). A release (1) outranks its
# prereleases (0); a numeric identifier (0, n) ranks below any alphanumeric one (1, text), which compare in
# ASCII order; with equal identifiers, fewer of them rank lower (tuple order does all of this).
SemverKey = tuple


def _identifier(text: str) -> tuple:
    return (0, int(text)) if text.isdigit() else (1, text)


@lru_cache(maxsize=4096)
def parse_semver(s: str) -> SemverKey | None:
    """The precedence key of a version, or None when ``s`` is not a valid semantic version (fails closed)."""
    if type(s) is not str:
        return None
    m = _SEMVER.fullmatch(s)
    if m is None:
        return None
    major, minor, patch, pre = m.groups()
    if pre is None:
        return (int(major), int(minor), int(patch), 1, ())
    return (int(major), int(minor), int(patch), 0, tuple(_identifier(p) for p in pre.split(".")))


def compare_semver(a: str, b: str) -> int | None:
    """-1, 0 or 1 by precedence; None when either is not a valid semantic version."""
    ka = parse_semver(a) if isinstance(a, str) else None
    kb = parse_semver(b) if isinstance(b, str) else None
    if ka is None or kb is None:
        return None
    return (ka > kb) - (ka < kb)
