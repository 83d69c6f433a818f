"""
An incremental Server-Sent Events parser (html.spec.whatwg.org/multipage/server-sent-events.html), fed decoded
text in chunks of any size: lines may end in CRLF, LF or CR, even with a CRLF split across two chunks; a leading
byte order mark is skipped; comment lines (the server's heartbeats) are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class SseEvent:
    event: str  # "message" when the event named none
    data: str
    id: str | None = None


class SseParser:
    def __init__(self, on_event: Callable[[SseEvent], None]) -> None:
        self._on_event = on_event
        self._buffer = ""
        self._data: list[str] = []
        self._event_type = ""
        self._last_id: str | None = None
        self._skip_leading_lf = False  # the previous chunk ended in CR: an LF starting this one ends the same line
        self._started = False

    def push(self, text: str) -> None:
        if not self._started and text:
            self._started = True
            if text[0] == "\ufeff":
                text = text[1:]
        if self._skip_leading_lf and text:
            if text[0] == "\n":
                text = text[1:]
            self._skip_leading_lf = False
        pending = self._buffer + text
        start = 0
        i = 0
        n = len(pending)
        while i < n:
            c = pending[i]
            if c != "\n" and c != "\r":
                i += 1
                continue
            self._line(pending[start:i])
            if c == "\r":
                if i + 1 < n:
                    if pending[i + 1] == "\n":
                        i += 1
                else:
                    self._skip_leading_lf = True
            i += 1
            start = i
        self._buffer = pending[start:]

    def _line(self, line: str) -> None:
        if line == "":
            self._dispatch()
            return
        if line[0] == ":":
            return
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event_type = value
        elif field == "id" and "\0" not in value:
            self._last_id = value
        # `retry` is for EventSource's own reconnect; the client has its own backoff.

    def _dispatch(self) -> None:
        if not self._data:
            self._event_type = ""
            return
        event = SseEvent(self._event_type or "message", "\n".join(self._data), self._last_id)
        self._data = []
        self._event_type = ""
        self._on_event(event)
