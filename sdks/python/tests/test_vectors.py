"""Every case of the repository's shared evaluation vectors (test/vectors/evaluation.json)."""

import json
from pathlib import Path

import pytest

from flagops.context import split_context
from flagops.evaluate import CompiledEnvironment
from flagops.jsonvalue import dumps, same_json

VECTORS = Path(__file__).resolve().parents[3] / "test" / "vectors" / "evaluation.json"
CASES = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


def run(case):
    flags = dict(case.get("flags") or {})
    if case["flag"] is not None:
        flags[case["flagKey"]] = case["flag"]
    env = CompiledEnvironment.compile(flags, case.get("segments"))
    user_id, attributes = split_context(case["context"])
    return env.evaluate(case["flagKey"], user_id, attributes, case.get("killedKeys"))


def test_the_file_holds_the_cases():
    assert len(CASES) >= 150
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_vector(case):
    result = json.loads(dumps(run(case)))  # compared after a JSON round trip, as the other implementations do
    assert same_json(result, case["expected"]), f"{result} != {case['expected']}"
