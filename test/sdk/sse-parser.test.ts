import { readEventStream, type SseEvent, SseParser } from '@flagops/sdk/sse';
import { describe, expect, it } from 'vitest';

function parse(chunks: string[]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = new SseParser((e) => events.push(e));
  for (const chunk of chunks) parser.push(chunk);
  return events;
}

/** Every way of cutting `text` in two. */
function splits(text: string): string[][] {
  return Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)]);
}

describe('the SSE parser (the WHATWG event stream format)', () => {
  const stream = 'retry: 1000\n\nid: 7\nevent: version\ndata: {"version":7}\n\n: heartbeat\n\nevent: version\ndata: {"version":8}\n\n';
  const expected = [
    { event: 'version', data: '{"version":7}', id: '7' },
    { event: 'version', data: '{"version":8}', id: '7' },
  ];

  it('reads the events of the flagops stream and skips retry hints and heartbeat comments', () => {
    expect(parse([stream])).toEqual(expected);
  });

  it('gives the same events however the bytes are cut into chunks', () => {
    for (const chunks of splits(stream)) expect(parse(chunks)).toEqual(expected);
    expect(parse([...stream])).toEqual(expected);
  });

  it('accepts CRLF and lone CR line ends, a CRLF split across chunks included', () => {
    const crlf = stream.replaceAll('\n', '\r\n');
    for (const chunks of splits(crlf)) expect(parse(chunks)).toEqual(expected);
    expect(parse([stream.replaceAll('\n', '\r')])).toEqual(expected);
  });

  it('joins multi-line data with newlines, strips one leading space, defaults the type to message', () => {
    expect(parse(['data:  two spaces\ndata:next\n\n'])).toEqual([{ event: 'message', data: ' two spaces\nnext' }]);
  });

  it('dispatches nothing for an event without data, and nothing before the blank line', () => {
    expect(parse(['event: version\n\n'])).toEqual([]);
    expect(parse(['event: version\ndata: {}\n'])).toEqual([]);
  });

  it('ignores a byte order mark at the start and unknown fields', () => {
    expect(parse(['\uFEFFdata: x\nfoo: bar\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
  });
});

/** A response body delivering `chunks` one by one, as a network would. */
function body(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(chunks[i++]);
      else controller.close();
    },
  });
}

const bytes = (text: string) => new TextEncoder().encode(text);

async function read(chunks: Uint8Array[]): Promise<{ events: SseEvent[]; arrivals: number }> {
  const events: SseEvent[] = [];
  let arrivals = 0;
  await readEventStream(
    body(chunks),
    (e) => events.push(e),
    () => arrivals++,
  );
  return { events, arrivals };
}

// The SDK reads GET /v1/stream with readEventStream, and the replicas read their upstream's stream with it.
describe('readEventStream (a text/event-stream response body)', () => {
  it('ends lines at a lone CR, as at LF and CRLF', async () => {
    const { events } = await read([bytes('event: versions\rdata: {"org":"o"}\r\revent: version\rdata: 2\r\r')]);
    expect(events).toEqual([
      { event: 'versions', data: '{"org":"o"}' },
      { event: 'version', data: '2' },
    ]);
  });

  it('skips a byte order mark before the first field, even cut across chunks', async () => {
    const bom = [0xef, 0xbb, 0xbf];
    const { events } = await read([new Uint8Array(bom.slice(0, 2)), new Uint8Array([bom[2], ...bytes('event: version\ndata: 3\n\n')])]);
    expect(events).toEqual([{ event: 'version', data: '3' }]);
  });

  it('gives each event the last id the stream set, and keeps it for the events after', async () => {
    const { events } = await read([bytes('id: 41\nevent: version\ndata: 41\n\nevent: version\ndata: 42\n\nid\ndata: 43\n\n')]);
    expect(events).toEqual([
      { event: 'version', data: '41', id: '41' },
      { event: 'version', data: '42', id: '41' },
      { event: 'message', data: '43', id: '' },
    ]);
  });

  it('reads fields as the format says: one leading space removed, a field without a colon has an empty value', async () => {
    const { events } = await read([bytes('event:  spaced \ndata\n\n')]);
    expect(events).toEqual([{ event: ' spaced ', data: '' }]);
  });

  it('decodes a character cut across chunks, and tells of every chunk, heartbeats included', async () => {
    const text = bytes('data: caf\u00e9\n\n: heartbeat\n\n');
    const { events, arrivals } = await read([text.slice(0, 9), text.slice(9, 11), text.slice(11)]);
    expect(events).toEqual([{ event: 'message', data: 'caf\u00e9' }]);
    expect(arrivals).toBe(3);
  });

  it('rejects when a listener throws, and cancels the body', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes('data: not json\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    await expect(readEventStream(stream, (e) => JSON.parse(e.data))).rejects.toThrow(SyntaxError);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(cancelled).toBe(true);
  });
});
