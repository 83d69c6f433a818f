/**
 * The wire format of GET /v1/stream (Server-Sent Events, WHATWG HTML §9.2). Every message is complete in one
 * write, so a reader never sees half an event between two chunks of ours.
 */

/** Asks EventSource clients to reconnect after this long when the connection drops (browsers default to ~3 s). */
export const RECONNECT_HINT_MS = 1_000;

export function streamPreamble(): string {
  return `retry: ${RECONNECT_HINT_MS}\n\n`;
}

/** `id` lets an EventSource resend it as Last-Event-ID; the server ignores it because it always sends the current version first. */
export function versionEvent(version: number): string {
  return `id: ${version}\nevent: version\ndata: {"version":${version}}\n\n`;
}

/** A comment line: ignored by every SSE parser, but it keeps proxies from timing out an idle connection. */
export function heartbeatComment(): string {
  return ': heartbeat\n\n';
}
