import { type SseEvent, SseParser } from '@flagops/sdk/sse';

export interface RawStream {
  response: Response;
  events: SseEvent[];
  /** Everything received, comments included. */
  text(): string;
  /** Resolves once `check` holds for what has arrived, or rejects after `ms`. */
  until(check: () => boolean, ms?: number): Promise<void>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens GET /v1/stream (or any SSE URL) with plain fetch and records what arrives. */
export async function openRawStream(url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  const controller = new AbortController();
  const response = await fetch(url, { headers, signal: controller.signal });
  const events: SseEvent[] = [];
  let text = '';
  const parser = new SseParser((e) => events.push(e));
  const ended =
    response.body === null
      ? Promise.resolve()
      : (async () => {
          const reader = response.body!.getReader();
          const decoder = new TextDecoder();
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return;
              const chunk = decoder.decode(value, { stream: true });
              text += chunk;
              parser.push(chunk);
            }
          } catch {
            // aborted by close()
          }
        })();
  return {
    response,
    events,
    text: () => text,
    ended,
    close: () => controller.abort(),
    until: async (check, ms = 3_000) => {
      const started = Date.now();
      while (!check()) {
        if (Date.now() - started > ms) throw new Error(`not within ${ms} ms; received ${JSON.stringify(text)}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  };
}
