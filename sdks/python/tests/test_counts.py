"""Evaluation counts against a local evaluation API: what is counted, reports, retries, threads, removed flags."""

import threading

import pytest

from fake_server import FakeEvalServer, flag, snapshot
from test_client import eventually
from test_events import client_for


@pytest.fixture
def server():
    s = FakeEvalServer()
    s.publish(snapshot(1, {"banner": flag("Spring sale", "Welcome"), "checkout": flag(True, False), "old": flag(True, False)}))
    yield s
    assert s.problems == []
    s.stop()


def test_counts_each_evaluation_that_served_the_flag_and_reports_them_on_close(server):
    with client_for(server, counts_interval=3600) as flags:
        for _ in range(5):
            flags.boolean("checkout", False, {"userId": "u-1"})
        flags.evaluate("banner")
        flags.details("banner", "x")
        flags.boolean("banner", False)  # a type mismatch: the caller got its own default, not counted
        flags.boolean("no-such-flag", False)
        flags.evaluate("no-such-flag")
    assert server.counts() == {"checkout/on": 5, "banner/on": 2}
    assert len(server.count_reports) == 1
    assert server.count_reports[0][0]["hour"].endswith(":00:00.000Z")


def test_no_counts_when_turned_off(server):
    with client_for(server, send_counts=False) as flags:
        flags.boolean("checkout", False)
    assert server.count_reports == []


def test_reports_every_interval_and_keeps_counts_through_failed_reports(server):
    server.count_fail = [503, 503]
    with client_for(server, counts_interval=0.05) as flags:
        for _ in range(7):
            flags.boolean("checkout", False)
        eventually(lambda: server.counts() == {"checkout/on": 7}, what="the counts after two failed reports")
        flags.boolean("checkout", False)
        eventually(lambda: server.counts() == {"checkout/on": 8}, what="the next interval's count")
    assert server.counts() == {"checkout/on": 8}  # closing sent nothing twice


def test_a_refused_report_is_dropped_not_sent_again(server):
    server.count_fail = [400]
    with client_for(server, counts_interval=0.05) as flags:
        flags.boolean("checkout", False)
        eventually(lambda: not server.count_fail, what="the refused report")
        flags.boolean("banner", False)
        flags.string("banner", "x")
        eventually(lambda: server.counts() == {"banner/on": 1}, what="the next report")


def test_no_count_is_lost_while_threads_evaluate_through_reports(server):
    per_thread, threads = 20_000, 4
    with client_for(server, counts_interval=0.005) as flags:

        def work():
            for _ in range(per_thread):
                flags.boolean("checkout", False)

        workers = [threading.Thread(target=work) for _ in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    assert server.counts() == {"checkout/on": per_thread * threads}
    assert len(server.count_reports) > 1  # reports were taken while the threads counted


def test_counts_of_a_flag_the_snapshot_no_longer_has_are_left_out(server):
    with client_for(server, counts_interval=3600, poll_interval=0.02) as flags:
        flags.boolean("old", False)
        flags.boolean("checkout", False)
        server.publish(snapshot(2, {"banner": flag("Spring sale", "Welcome"), "checkout": flag(True, False)}))
        eventually(lambda: flags.version == 2, what="the snapshot without the flag")
    assert server.counts() == {"checkout/on": 1}
