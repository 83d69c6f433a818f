"""
The Python SDK's costs: microseconds per evaluation of the benchmark flag (country in [DE, FR] and appVersion
semver_gt 2.0.0 → on, else a 30 % rollout) and the memory a 10,000-flag snapshot takes in a client.

    python3 sdks/python/benchmarks/bench_sdk.py [contexts.json]     (or npm run bench -- sdks-python)

Without a file it makes its own users; scripts/bench/sdks-python.mjs passes the JS SDK benchmark's users, so
both languages evaluate the same contexts. Prints one JSON object.
"""

from __future__ import annotations

import gc
import json
import os
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flagops import Client, parse_snapshot  # noqa: E402
from flagops.context import split_context  # noqa: E402

RULE_FLAG = {
    "enabled": True,
    "rolloutPct": 30,
    "valueOn": True,
    "valueOff": False,
    "rules": [
        {
            "id": "eu-new-app",
            "serve": "on",
            "conditions": [
                {"attribute": "country", "op": "in", "value": ["DE", "FR"]},
                {"attribute": "appVersion", "op": "semver_gt", "value": "2.0.0"},
            ],
        }
    ],
    "killed": False,
    "archived": False,
    "defaultValue": None,
}
ROUNDS = 7


def own_contexts(n: int) -> list[dict]:
    rng = random.Random(42)
    countries = ["DE", "FR", "US", "GB", "IT"]
    versions = ["1.9.0", "2.0.0", "2.0.1", "2.1.0", "3.2.5", "10.0.0"]
    return [{"userId": f"user-{i}-{rng.randrange(10**9):x}", "attributes": {"country": rng.choice(countries), "appVersion": rng.choice(versions)}} for i in range(n)]


def us_per_op(variants, contexts) -> dict:
    """
    Median µs per call of each variant over ROUNDS passes, the variants taking turns so load falls on all alike:
    wall time (``us``) and this thread's CPU time (``cpuUs``, which moves less with other processes' load).
    """
    rounds = {name: [] for name, _ in variants}
    cpu = {name: [] for name, _ in variants}
    share = {}
    for _, fn in variants:  # warm-up: caches, the semver parser's memo
        for c in contexts[:2000]:
            fn(c)
    for _ in range(ROUNDS):
        for name, fn in variants:
            on = 0
            started, cpu_started = time.perf_counter_ns(), time.thread_time_ns()
            for c in contexts:
                if fn(c) is True:
                    on += 1
            rounds[name].append((time.perf_counter_ns() - started) / len(contexts) / 1000)
            cpu[name].append((time.thread_time_ns() - cpu_started) / len(contexts) / 1000)
            share[name] = on / len(contexts)
    return {name: {"us": statistics.median(r), "cpuUs": statistics.median(cpu[name]), "onShare": share[name]} for name, r in rounds.items()}


def big_snapshot(n: int) -> dict:
    flags = {}
    for i in range(n):
        # A quarter with the two-condition rule, the rest plain rollouts; string keys like real ones.
        config = RULE_FLAG if i % 4 == 0 else {"enabled": True, "rolloutPct": (i * 7) % 101, "valueOn": True, "valueOff": False, "rules": [],
                                               "killed": False, "archived": False, "defaultValue": None}
        flags[f"team-{i % 40}-feature-{i}"] = config
    return {"version": 1, "environment": "prod", "flags": flags}


def main() -> None:
    contexts = json.loads(Path(sys.argv[1]).read_text()) if len(sys.argv) > 1 else own_contexts(100_000)
    snapshot = {"version": 1, "environment": "prod", "flags": {"new-checkout": RULE_FLAG}}
    # Evaluation counts on, as a connected client's default (reported to nowhere here: the port is closed).
    client = Client("http://127.0.0.1:9", "svc_sdk_bench", bootstrap=snapshot, stream=False, retry_initial=3600, retry_max=3600)
    uncounted = Client("http://127.0.0.1:9", "svc_sdk_bench", bootstrap=snapshot, stream=False, retry_initial=3600, retry_max=3600,
                       send_counts=False)
    # Exposures on, in one window for the whole run: the set of what the window recorded holds every user, so each
    # evaluation after a user's first is a repeat (the common case); the first ones fill the queue, which drops the
    # oldest, as the sender has nowhere to send them.
    exposing = Client("http://127.0.0.1:9", "svc_sdk_bench", bootstrap=snapshot, stream=False, retry_initial=3600, retry_max=3600,
                      send_exposures=True, exposure_flush_interval=3600)
    compiled = client._snapshot.compiled
    split = [split_context(c) for c in contexts]
    pairs = iter(())

    def core(c):
        return compiled.evaluate("new-checkout", c["userId"], c["attributes"])["value"]

    rows = us_per_op(
        [
            ("core `CompiledEnvironment.evaluate`", core),
            ("SDK `client.boolean(key, False, context)`", lambda c: client.boolean("new-checkout", False, c)),
            ("SDK `client.boolean(…)`, `send_counts=False`", lambda c: uncounted.boolean("new-checkout", False, c)),
            ("SDK `client.boolean(…)`, `send_exposures=True`", lambda c: exposing.boolean("new-checkout", False, c)),
            ("SDK `client.details(key, False, context).value`", lambda c: client.details("new-checkout", False, c).value),
        ],
        contexts,
    )
    del split, pairs
    client.close()
    uncounted.close()
    exposing.close()

    text = json.dumps(big_snapshot(10_000))
    gc.collect()
    started = time.perf_counter()
    loaded = parse_snapshot(json.loads(text))
    load_ms = (time.perf_counter() - started) * 1000
    del loaded
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept = parse_snapshot(json.loads(text))
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    check = kept.compiled.evaluate("team-0-feature-0", "user-1", {"country": "DE", "appVersion": "3.0.0"})["value"]
    print(json.dumps({
        "python": sys.version.split()[0],
        "users": len(contexts),
        "rounds": ROUNDS,
        "load": os.getloadavg()[0],
        "rows": rows,
        "snapshot": {"flags": 10_000, "jsonMiB": len(text) / 2**20, "retainedMiB": retained / 2**20, "loadMs": load_ms, "check": check},
    }))


if __name__ == "__main__":
    main()
