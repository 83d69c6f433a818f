/**
 * Server-Sent Events: the SDK reads GET /v1/stream with them, and the flagops service's replicas read their
 * upstream's stream with the same code.
 */
export interface SseEvent {
  /** `message` when the event named none. */
  event: string;
  data: string;
  id?: string;
}

const LF = 10;
const CR = 13;

/**
 * An incremental Server-Sent Events parser (html.spec.whatwg.org/multipage/server-sent-events.html), fed
 * decoded text in chunks of any size: Node has no EventSource, and EventSource cannot send an Authorization
 * header anyway. A leading byte order mark is skipped; lines may end in CRLF, LF or CR, even when a CRLF is
 * split across two chunks; `id` is kept until changed, as EventSource keeps its last event id.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private eventType = '';
  private lastId: string | undefined;
  /** The previous chunk ended in CR: an LF starting the next one belongs to that line end. */
  private skipLeadingLf = false;
  private started = false;

  constructor(private readonly onEvent: (event: SseEvent) => void) {}

  push(text: string): void {
    let chunk = text;
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    if (this.skipLeadingLf && chunk.length > 0) {
      if (chunk.charCodeAt(0) === LF) chunk = chunk.slice(1);
      this.skipLeadingLf = false;
    }
    const pending = this.buffer + chunk;
    let start = 0;
    for (let i = 0; i < pending.length; i++) {
      const c = pending.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      this.line(pending.slice(start, i));
      if (c === CR) {
        if (i + 1 < pending.length) {
          if (pending.charCodeAt(i + 1) === LF) i++;
        } else {
          this.skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.buffer = pending.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' */) return; // a comment: heartbeats
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* ' ' */) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.eventType = value;
    else if (field === 'id' && !value.includes('\u0000')) this.lastId = value;
    // `retry` only matters to EventSource's own reconnect; the SDK has its own backoff.
  }

  private dispatch(): void {
    if (this.data.length === 0) {
      this.eventType = '';
      return;
    }
    const event: SseEvent = { event: this.eventType || 'message', data: this.data.join('\n') };
    if (this.lastId !== undefined) event.id = this.lastId;
    this.data = [];
    this.eventType = '';
    this.onEvent(event);
  }
}

/**
 * Reads a text/event-stream body to its end, calling `onEvent` for each event; `onChunk` hears every arrival,
 * heartbeat comments included, for an idle watchdog. Resolves when the stream ends, rejects when it breaks or
 * when `onEvent` throws (the body is then cancelled).
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: SseEvent) => void,
  onChunk: () => void = () => {},
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser(onEvent);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      onChunk();
      parser.push(decoder.decode(value, { stream: true }));
    }
  } catch (err) {
    reader.cancel().catch(() => {}); // the connection is of no further use
    throw err;
  }
}
