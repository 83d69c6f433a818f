// Follows an evaluation port's or a replica's SDK stream (/v1/stream) and tells when a version is announced:
// the moment an SDK following that server learns of a change.

/** Opens the stream; `next(version)` resolves with performance.now() when that version (or a newer one) is announced. */
export async function followVersions(url, sdkKey) {
  const res = await fetch(`${url}/v1/stream`, { headers: { authorization: `Bearer ${sdkKey}` } });
  if (!res.ok) throw new Error(`${url}/v1/stream answered ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let latest = 0;
  let waiter = null;
  (async () => {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      // The event's id is its version; a patch's flags carry versions of their own (their configs').
      for (const match of buffer.matchAll(/^id: (\d+)$/gm)) latest = Math.max(latest, Number(match[1]));
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
      if (waiter && latest >= waiter.version) {
        waiter.resolve(performance.now());
        waiter = null;
      }
    }
  })().catch(() => undefined);
  return {
    current: () => latest,
    next: (version) => (latest >= version ? Promise.resolve(performance.now()) : new Promise((resolve) => (waiter = { version, resolve }))),
    close: () => reader.cancel(),
  };
}

/** The p-th percentile of `values` (nearest rank). */
export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
