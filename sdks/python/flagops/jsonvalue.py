"""
JSON values with JavaScript's meaning, so a Python SDK answers what the server (JavaScript) answers:
strict equality (``true`` is not ``1``, ``1`` is ``1.0``), numbers as doubles, and JSON text printed as
``JSON.stringify`` prints it (``5``, not ``5.0``).
"""

from __future__ import annotations

import json
import math
from typing import Any

# What a JSON scalar is after JSON.parse in JavaScript: finite numbers only (NaN and infinities are not JSON).
_NUMBER = (int, float)


def as_double(v: Any) -> float | None:
    """A Python number as JavaScript holds it (a double), or None when ``v`` is not a number (bool is not)."""
    t = type(v)
    if t is float:
        return v
    if t is int:
        try:
            return float(v)
        except OverflowError:  # an integer beyond the doubles: JSON.parse reads it as an infinity
            return math.inf if v > 0 else -math.inf
    if isinstance(v, bool) or not isinstance(v, _NUMBER):
        return None
    return as_double(float(v) if isinstance(v, float) else int(v))


def is_scalar(v: Any) -> bool:
    """A JSON scalar: string, finite number, boolean or null."""
    if v is None or isinstance(v, (str, bool)):
        return True
    d = as_double(v)
    return d is not None and math.isfinite(d)


def scalar_key(v: Any) -> tuple | None:
    """A key under which two scalars are equal exactly when JavaScript's ``===`` says so; None for non-scalars."""
    if isinstance(v, str):
        return ("s", str(v))
    if v is None:
        return ("z",)
    if isinstance(v, bool):
        return ("b", bool(v))
    d = as_double(v)
    if d is None or not math.isfinite(d):
        return None
    return ("n", d)


def strict_equal(a: Any, b: Any) -> bool:
    """JavaScript's ``a === b`` for scalars: the same kind and the same value (numbers as doubles)."""
    ka = scalar_key(a)
    return ka is not None and ka == scalar_key(b)


def copy_json(v: Any) -> Any:
    """A deep copy of a JSON value, so a caller changing a served value does not change what is served next."""
    t = type(v)
    if t is dict:
        return {k: copy_json(x) for k, x in v.items()}
    if t is list:
        return [copy_json(x) for x in v]
    return v


def _js_numbers(v: Any) -> Any:
    t = type(v)
    if t is float:
        # JSON.stringify prints an integral double below 1e21 without a fraction.
        return int(v) if v.is_integer() and abs(v) < 1e21 else v
    if t is dict:
        return {k: _js_numbers(x) for k, x in v.items()}
    if t is list:
        return [_js_numbers(x) for x in v]
    return v


def dumps(v: Any, **kwargs: Any) -> str:
    """JSON text of ``v`` with numbers as JavaScript prints them; compact unless ``indent`` is given."""
    kwargs.setdefault("separators", (",", ":"))
    kwargs.setdefault("ensure_ascii", False)
    return json.dumps(_js_numbers(v), **kwargs)


def same_json(a: Any, b: Any) -> bool:
    """Deep JSON equality with JavaScript's meaning: 5 equals 5.0, true does not equal 1."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    ka, kb = scalar_key(a), scalar_key(b)
    return ka is not None and ka == kb
