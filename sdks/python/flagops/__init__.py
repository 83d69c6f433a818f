"""
flagops for Python: evaluates a flagops environment's flags in process with the same order and results as the
evaluation server, kept current over ``/v1/stream``. Standard library only.

    from flagops import Client
    with Client("http://127.0.0.1:4001", "svc_sdk_...") as flags:
        flags.wait_ready()
        flags.boolean("checkout-v2", False, {"userId": "user-42", "attributes": {"country": "DE"}})
"""

__version__ = "0.1.0"

from .client import ERROR, NOT_READY, READY, STALE, ChangeEvent, Client, StatusEvent  # noqa: E402
from .details import EvaluationDetails  # noqa: E402
from .events import EventStats  # noqa: E402
from .evaluate import CompiledEnvironment  # noqa: E402
from .murmur3 import bucket, murmur3_32  # noqa: E402
from .store import Snapshot, SnapshotError, parse_snapshot  # noqa: E402

__all__ = [
    "Client",
    "ChangeEvent",
    "StatusEvent",
    "EvaluationDetails",
    "EventStats",
    "CompiledEnvironment",
    "Snapshot",
    "SnapshotError",
    "parse_snapshot",
    "bucket",
    "murmur3_32",
    "NOT_READY",
    "READY",
    "STALE",
    "ERROR",
    "__version__",
]
