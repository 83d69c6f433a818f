import { createHmac } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Flagops-Signature';

/** `sha256=<hex HMAC-SHA256 of the body, keyed with the webhook's secret>`: what a receiver recomputes. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface SendOutcome {
  ok: boolean;
  /** Why it failed: the status, a timeout, or the network error; never a path. */
  error?: string;
}

/**
 * One attempt: POST `body` to `url`, signed, giving up after `timeoutMs` (headers and body), so a receiver
 * that hangs costs one timeout and holds up nothing else. Only a 2xx is a delivery; a redirect is not followed.
 */
export async function sendOnce(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendOutcome> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'flagops-webhooks', ...headers },
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.status >= 200 && res.status < 300) return { ok: true };
    return { ok: false, error: `the receiver answered ${res.status}` };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return { ok: false, error: `no answer within ${timeoutMs} ms` };
    return { ok: false, error: `could not reach the receiver: ${e.cause?.code ?? e.cause?.message ?? e.message}` };
  }
}

/**
 * The wait before attempt `attempt + 1` after `attempt` failed ones: exponential (base × 2^(attempt−1)),
 * capped, with jitter (between half and all of it), so receivers coming back are not hit by every sender at once.
 */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const full = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.round(full * (0.5 + random() / 2));
}
