"""
The checking command:

    python3 -m flagops evaluate --url <evaluation origin> --sdk-key <key> [--context '<json>'] <flagKey>...
    python3 -m flagops watch    --url <evaluation origin> --sdk-key <key> [--context '<json>'] <flagKey>

``evaluate`` prints one JSON object keyed by flag key, computed locally from one snapshot. ``watch`` prints one
JSON line ``{"flag", "result", "at"}`` at start and on every change of that flag's result, until it is stopped.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from datetime import datetime, timezone
from typing import Any, Sequence

from .client import Client
from .context import context_problem, split_context
from .jsonvalue import dumps, same_json
from .store import SnapshotError, parse_snapshot
from .transport import HttpError, Transport


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python3 -m flagops", description="Evaluate flagops flags locally, as an application using the SDK does.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (
        ("evaluate", "print one JSON object keyed by flag key, evaluated locally from one snapshot"),
        ("watch", "print a JSON line {flag, result, at} at start and whenever the flag's result changes"),
    ):
        command = commands.add_parser(name, help=help_text, description=help_text)
        command.add_argument("--url", required=True, help="the evaluation API's origin, e.g. http://127.0.0.1:4001")
        command.add_argument("--sdk-key", required=True, help="an SDK key: it fixes the project and the environment")
        command.add_argument("--context", default=None, help='the context as JSON: {"userId": "...", "attributes": {...}}')
        if name == "evaluate":
            command.add_argument(
                "--contexts-file",
                default=None,
                help="a file of contexts, one JSON object a line: prints one JSON object a line, all from the same snapshot",
            )
        command.add_argument("flags", nargs="+" if name == "evaluate" else 1, metavar="flagKey")
    return parser


class _Usage(Exception):
    """A wrong command line: its message goes to stderr, exit status 2."""


# The server's limits on a request body (1 MiB, arrays and objects nested at most 100 levels) as they bear on the
# context it carries, one level inside the body: what the command refuses as the server would.
_MAX_CONTEXT_BYTES = 1 << 20
_MAX_CONTEXT_DEPTH = 99


def _too_large_for_the_server(text: str) -> str | None:
    if len(text.encode("utf-8")) > _MAX_CONTEXT_BYTES:
        return "is over 1 MiB, which the server refuses"
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "}]":
            depth -= 1
    if deepest > _MAX_CONTEXT_DEPTH:
        return f"nests arrays and objects more than {_MAX_CONTEXT_DEPTH} levels deep, which the server refuses"
    return None


def _context(text: str | None, where: str = "--context") -> Any:
    if text is None:
        return None
    too_large = _too_large_for_the_server(text.strip())
    if too_large is not None:
        raise _Usage(f"{where} {too_large}")
    try:
        context = json.loads(text)
    except ValueError as err:
        raise _Usage(f"{where} is not JSON: {err}") from None
    problem = context_problem(context)
    if problem is not None:
        raise _Usage(f"{where}: {problem}")
    return context


def _evaluate(args: argparse.Namespace) -> int:
    if args.contexts_file is not None and args.context is not None:
        raise _Usage("give --context or --contexts-file, not both")
    if args.contexts_file is not None:
        try:
            with open(args.contexts_file, encoding="utf-8") as f:
                # A bad line is named by its number in the file, as editors count them.
                contexts = [
                    _context(line, f"--contexts-file line {number}") for number, line in enumerate(f, start=1) if line.strip()
                ]
        except OSError as err:
            raise _Usage(f"--contexts-file cannot be read: {err.strerror or err}") from None
    else:
        contexts = [_context(args.context)]
    snapshot = _first_snapshot(_transport(args))
    if snapshot is None:
        return 1
    lines = []
    for context in contexts:
        user_id, attributes = split_context(context)
        lines.append(dumps({key: snapshot.compiled.evaluate(key, user_id, attributes) for key in args.flags}))
    print("\n".join(lines))
    return 0


def _first_snapshot(transport: Transport) -> Any | None:
    """The snapshot, fetched once; None, with the reason on stderr, when it cannot be (a refused key, no server)."""
    try:
        return parse_snapshot(transport.get_snapshot())
    except (HttpError, SnapshotError, OSError) as err:
        print(f"flagops: could not load the snapshot: {err}", file=sys.stderr)
        return None


def _transport(args: argparse.Namespace) -> Transport:
    if not args.url or not args.sdk_key:
        raise _Usage("--url and --sdk-key are required")
    try:
        return Transport(args.url, args.sdk_key, 10.0)
    except ValueError as err:
        raise _Usage(f"--url: {str(err).removeprefix('flagops: ')}") from None


def _now() -> str:
    """An ISO-8601 UTC instant with milliseconds, as JavaScript's Date#toISOString writes it."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _watch(args: argparse.Namespace) -> int:
    context = _context(args.context)
    flag = args.flags[0]
    stop = threading.Event()
    lock = threading.Lock()
    last: list[Any] = []

    def report() -> None:
        with lock:
            result = client.evaluate(flag, context)
            if result.get("reason") == "error" or (last and same_json(last[0], result)):
                return
            last[:] = [result]
            sys.stdout.write(dumps({"flag": flag, "result": result, "at": _now()}) + "\n")
            sys.stdout.flush()

    # A bad --url is refused before anything starts, and a snapshot that cannot be fetched (a refused key, no
    # server) ends the command as it ends evaluate, rather than leave it waiting silently.
    if _first_snapshot(_transport(args)) is None:
        return 1
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    client = Client(args.url, args.sdk_key, send_counts=False)  # checking a flag is not application traffic
    try:
        client.on_change(lambda _event: report())
        client.on_status(lambda _event: report())
        if client.wait_ready(10.0) not in ("ready", "stale"):
            print(f"flagops: no snapshot yet (status {client.status}); waiting for one", file=sys.stderr)
        report()
        # Woken often: a signal the kernel hands to another thread runs its handler only when this thread next
        # runs Python code, and an endless wait would never let it.
        while not stop.wait(0.2):
            pass
    finally:
        client.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _evaluate(args) if args.command == "evaluate" else _watch(args)
    except _Usage as err:
        print(f"flagops: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
