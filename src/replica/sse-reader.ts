/** One Server-Sent Event: its `event` name (default `message`) and its `data` lines joined. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Splits a text/event-stream body into events (WHATWG HTML §9.2.6, the parts our streams use: event, data,
 * comments). `onChunk` hears every arrival, heartbeats included. Resolves when the stream ends; rejects when it breaks.
 */
export async function readSse(body: ReadableStream<Uint8Array>, onEvent: (event: SseEvent) => void, onChunk: () => void = () => {}): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = 'message';
  let data: string[] = [];
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    onChunk();
    buffer += decoder.decode(chunk, { stream: true });
    let eol = buffer.indexOf('\n');
    while (eol >= 0) {
      const line = buffer.slice(0, eol).replace(/\r$/, '');
      buffer = buffer.slice(eol + 1);
      eol = buffer.indexOf('\n');
      if (line === '') {
        if (data.length > 0) onEvent({ event, data: data.join('\n') });
        event = 'message';
        data = [];
      } else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
  }
}
