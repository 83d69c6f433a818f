"""python3 -m flagops evaluate|watch against a local evaluation API."""

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fake_server import KEY, FakeEvalServer, flag, patch_between, snapshot

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def server():
    s = FakeEvalServer()
    s.publish(snapshot(1, {"banner": flag("Spring sale", "Welcome"), "rollout": flag(True, False, rolloutPct=50)}))
    yield s
    s.stop()


def command(*args, timeout=60, **kwargs):
    return subprocess.run([sys.executable, "-m", "flagops", *args], cwd=PACKAGE_ROOT, capture_output=True, text=True, timeout=timeout, **kwargs)


def test_evaluate_prints_one_object_keyed_by_flag(server):
    ran = command("evaluate", "--url", server.url, "--sdk-key", KEY, "--context", '{"userId":"user-1"}', "banner", "rollout", "nope")
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert out["banner"] == {"value": "Spring sale", "reason": "default", "variation": "on"}
    assert out["rollout"]["reason"] == "rollout" and isinstance(out["rollout"]["bucket"], (int, float))
    assert out["nope"] == {"value": None, "reason": "flag_not_found"}
    assert ran.stdout.count("\n") == 1


def test_evaluate_refuses_a_bad_context_and_a_refused_key(server):
    bad = command("evaluate", "--url", server.url, "--sdk-key", KEY, "--context", '{"userId":5}', "banner")
    assert bad.returncode != 0 and "userId" in bad.stderr
    refused = command("evaluate", "--url", server.url, "--sdk-key", "svc_sdk_wrong", "banner")
    assert refused.returncode == 1 and "401" in refused.stderr


def test_wrong_arguments_are_one_line_and_exit_2_never_a_traceback(server, tmp_path):
    for args in (
        ("evaluate", "--url", "notaurl", "--sdk-key", KEY, "banner"),
        ("evaluate", "--url", server.url, "--sdk-key", KEY, "--contexts-file", str(tmp_path / "missing.jsonl"), "banner"),
        ("evaluate", "--url", server.url, "--sdk-key", KEY, "--context", "{not json", "banner"),
        ("watch", "--url", "ftp://127.0.0.1/", "--sdk-key", KEY, "banner"),
        ("watch", "--url", server.url, "--sdk-key", "", "banner"),
        ("evaluate", "--url", server.url, "--sdk-key", "", "banner"),
    ):
        ran = command(*args)
        assert ran.returncode == 2, (args, ran.stderr)
        assert ran.stderr.startswith("flagops: ") and "Traceback" not in ran.stderr, ran.stderr
        assert ran.stderr.count("\n") == 1, ran.stderr


def _nested(n):
    """A context whose attribute "deep" holds n objects one inside the other: the body carrying it nests n+3 levels."""
    return '{"attributes":{"deep":' + '{"a":' * n + "1" + "}" * n + "}}"


def test_a_context_the_server_would_refuse_for_its_size_or_depth_is_exit_2(server, tmp_path):
    too_big = tmp_path / "big.jsonl"
    too_big.write_text('{"userId":"' + "x" * (1 << 20) + '"}\n')
    for args in (
        ("--context", _nested(98)),
        ("--contexts-file", str(too_big)),
    ):
        ran = command("evaluate", "--url", server.url, "--sdk-key", KEY, *args, "banner")
        assert ran.returncode == 2 and "which the server refuses" in ran.stderr, (args[0], ran.stderr)
    within = command("evaluate", "--url", server.url, "--sdk-key", KEY, "--context", _nested(97), "banner")
    assert within.returncode == 0, within.stderr


def test_watch_exits_1_at_once_when_the_first_snapshot_cannot_be_fetched(server):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        nothing_there = f"http://127.0.0.1:{unused.getsockname()[1]}"  # bound, not listening: connections are refused
        for url, key, says in ((server.url, "svc_sdk_wrong", "401"), (nothing_there, KEY, "could not load the snapshot")):
            ran = command("watch", "--url", url, "--sdk-key", key, "banner", timeout=20)
            assert ran.returncode == 1 and ran.stdout == "", (url, ran.stderr)
            assert says in ran.stderr and "Traceback" not in ran.stderr, ran.stderr


def test_evaluate_many_contexts_from_a_file(server, tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text('{"userId":"a"}\n\n{"userId":"b","attributes":{"x":1}}\n')
    ran = command("evaluate", "--url", server.url, "--sdk-key", KEY, "--contexts-file", str(contexts), "banner")
    assert ran.returncode == 0, ran.stderr
    assert [json.loads(line)["banner"]["value"] for line in ran.stdout.splitlines()] == ["Spring sale", "Spring sale"]


def test_a_bad_line_of_the_contexts_file_is_named_by_its_number(server, tmp_path):
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text('{"userId":"a"}\n\n{"attributes":[1]}\n')
    ran = command("evaluate", "--url", server.url, "--sdk-key", KEY, "--contexts-file", str(contexts), "banner")
    assert ran.returncode == 2
    assert ran.stderr == "flagops: --contexts-file line 3: context.attributes must be a mapping\n", ran.stderr


def test_watch_prints_at_start_and_on_each_change_of_the_result(server):
    proc = subprocess.Popen([sys.executable, "-m", "flagops", "watch", "--url", server.url, "--sdk-key", KEY, "banner"],
                            cwd=PACKAGE_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = json.loads(proc.stdout.readline())
        assert first["flag"] == "banner" and first["result"]["value"] == "Spring sale" and first["at"].endswith("Z")
        v2 = snapshot(2, {"banner": flag("Spring sale", "Welcome"), "rollout": flag(False, True)})  # another flag changes
        server.publish(v2)
        server.announce(2, since=1, patch=patch_between(server.snapshots[1], v2))
        v3 = snapshot(3, {"banner": flag("Spring sale", "Welcome", killed=True), "rollout": flag(False, True)})
        server.publish(v3)
        server.announce(3, since=2, patch=patch_between(v2, v3))
        second = json.loads(proc.stdout.readline())  # the kill, not the other flag's change
        assert second["result"] == {"value": "Welcome", "reason": "killed", "variation": "off"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0
