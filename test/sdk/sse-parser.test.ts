import { describe, expect, it } from 'vitest';
import { type SseEvent, SseParser } from '@flagops/sdk/sse';

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

describe('the SSE parser (WHATWG HTML §9.2.6)', () => {
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
