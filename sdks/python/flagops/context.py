"""
The evaluation context as callers pass it, ``{"userId": ..., "attributes": {...}}``, checked with the rules of
``POST /v1/evaluate`` so that local evaluation refuses what the server refuses, and split for the evaluator.
"""

from __future__ import annotations

from typing import Any, Mapping

_EMPTY: Mapping[str, Any] = {}


def context_problem(context: Any) -> str | None:
    """Why a context cannot be evaluated, or None."""
    if context is None:
        return None
    if type(context) is dict:  # the common case, without the costlier checks of any mapping
        user_id = context.get("userId")
        attributes = context.get("attributes")
        if (
            len(context) == ("userId" in context) + ("attributes" in context)
            and (user_id is None or type(user_id) is str)
            and (attributes is None or type(attributes) is dict)
        ):
            return None
    if not isinstance(context, Mapping):
        return "the context must be a mapping {userId, attributes}"
    for field in context:
        if field not in ("userId", "attributes"):
            return f"unknown field context.{field}; expected userId and attributes"
    user_id = context.get("userId")
    if user_id is not None and not isinstance(user_id, str):
        return "context.userId must be a string"
    attributes = context.get("attributes")
    if attributes is not None and not isinstance(attributes, Mapping):
        return "context.attributes must be a mapping"
    return None


def split_context(context: Mapping[str, Any] | None) -> tuple[str | None, Mapping[str, Any]]:
    """(userId or None, attributes or an empty mapping); a null userId or attributes is the same as none."""
    if not context:
        return None, _EMPTY
    attributes = context.get("attributes")
    return context.get("userId"), attributes if attributes is not None else _EMPTY
