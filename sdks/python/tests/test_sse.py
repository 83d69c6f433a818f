"""The Server-Sent Events parser: line ends of every kind, split anywhere, comments, ids."""

from flagops.sse import SseParser


def parse(*chunks):
    events = []
    parser = SseParser(events.append)
    for chunk in chunks:
        parser.push(chunk)
    return events


def test_events_with_any_line_end():
    for end in ("\n", "\r\n", "\r"):
        text = f"event: version{end}data: {{\"version\":1}}{end}{end}"
        events = parse(text)
        assert [(e.event, e.data) for e in events] == [("version", '{"version":1}')]


def test_split_at_every_position_gives_the_same_events():
    text = '\ufeffretry: 1000\r\n\r\n: heartbeat\r\nid: 7\r\nevent: version\r\ndata: a\r\ndata:b\r\n\r\ndata: c\r\r'
    whole = parse(text)
    assert [(e.event, e.data, e.id) for e in whole] == [("version", "a\nb", "7"), ("message", "c", "7")]
    for cut in range(len(text) + 1):
        assert parse(text[:cut], text[cut:]) == whole


def test_comments_and_empty_events_dispatch_nothing():
    assert parse(": heartbeat\n\n\n", "event: x\n\n") == []
