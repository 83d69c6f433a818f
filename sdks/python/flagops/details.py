"""
What a caller gets: the core's result as :class:`EvaluationDetails`, or the caller's default with reason
``error`` and one of OpenFeature's error codes. Shaped so an OpenFeature provider can wrap the client as it is:
``value``, ``variant``, ``reason`` (flagops' own and OpenFeature's), ``error_code``, ``error_message``, ``flag_metadata``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FLAG_NOT_FOUND = "FLAG_NOT_FOUND"
TYPE_MISMATCH = "TYPE_MISMATCH"
PROVIDER_NOT_READY = "PROVIDER_NOT_READY"
INVALID_CONTEXT = "INVALID_CONTEXT"
GENERAL = "GENERAL"

# flagops reasons in OpenFeature's vocabulary, as the JavaScript OpenFeature providers and OFREP map them.
_OPENFEATURE_REASON = {
    "killed": "DISABLED",
    "flag_disabled": "DISABLED",
    "prerequisite_failed": "DISABLED",
    "rule_match": "TARGETING_MATCH",
    "rollout": "SPLIT",
    "default": "DEFAULT",
    "archived": "DEFAULT",
    "flag_not_found": "ERROR",
    "error": "ERROR",
}


@dataclass(frozen=True, slots=True)
class EvaluationDetails:
    flag_key: str
    value: Any
    reason: str
    variation: str | None = None
    rule_id: str | None = None
    bucket: float | None = None
    variant_bucket: float | None = None
    prerequisite_key: str | None = None
    error_code: str | None = None
    error_message: str | None = None

    @property
    def variant(self) -> str | None:
        """OpenFeature's name for the variation: ``on``, ``off``, ``default`` or a variant's name."""
        return self.variation

    @property
    def openfeature_reason(self) -> str:
        return _OPENFEATURE_REASON.get(self.reason, "UNKNOWN")

    @property
    def flag_metadata(self) -> dict[str, Any]:
        """flagops' own reason, the rule, the buckets, the failed prerequisite, the kill: what a hook or log line tells apart."""
        metadata: dict[str, Any] = {"flagopsReason": self.reason}
        if self.rule_id is not None:
            metadata["ruleId"] = self.rule_id
        if self.bucket is not None:
            metadata["bucket"] = self.bucket
        if self.variant_bucket is not None:
            metadata["variantBucket"] = self.variant_bucket
        if self.prerequisite_key is not None:
            metadata["prerequisiteKey"] = self.prerequisite_key
        if self.reason == "killed":
            metadata["killed"] = True
        if self.reason == "archived":
            metadata["archived"] = True
        return metadata

    def to_dict(self) -> dict[str, Any]:
        """The result as ``POST /v1/evaluate`` writes it (camelCase, absent fields left out)."""
        out: dict[str, Any] = {"value": self.value, "reason": self.reason}
        for name, field in (
            ("variation", self.variation),
            ("ruleId", self.rule_id),
            ("bucket", self.bucket),
            ("variantBucket", self.variant_bucket),
            ("prerequisiteKey", self.prerequisite_key),
            ("errorCode", self.error_code),
            ("errorMessage", self.error_message),
        ):
            if field is not None:
                out[name] = field
        return out


def from_result(flag_key: str, result: dict, value: Any) -> EvaluationDetails:
    return EvaluationDetails(
        flag_key,
        value,
        result["reason"],
        result.get("variation"),
        result.get("ruleId"),
        result.get("bucket"),
        result.get("variantBucket"),
        result.get("prerequisiteKey"),
    )


def error_details(flag_key: str, default: Any, code: str, message: str) -> EvaluationDetails:
    return EvaluationDetails(flag_key, default, "error", error_code=code, error_message=message)


def kind_of(default: Any) -> str:
    """What a default asks of the value: its JSON type; None accepts any value."""
    if isinstance(default, bool):
        return "boolean"
    if isinstance(default, str):
        return "string"
    if isinstance(default, (int, float)):
        return "number"
    if isinstance(default, (dict, list)):
        return "object"
    return "any"


def matches(value: Any, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, (dict, list))


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    return "an array" if isinstance(value, list) else "an object"
