import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';

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

export interface SenderOptions {
  /** Idle connections kept open per receiver (host and port) for the next delivery. */
  idlePerReceiver: number;
  /** How long an idle connection is kept (shorter when the receiver announces a shorter keep-alive). */
  idleMs: number;
}

/**
 * Sends the POSTs of webhooks over its own keep-alive agents, so that what webhooks hold open is theirs
 * alone to bound: connections in use are the attempts running (which the service limits), idle ones at
 * most `idlePerReceiver` per receiver, closed after `idleMs`. `close()` ends them all, attempts included.
 */
export class WebhookSender {
  private readonly agents: { 'http:': http.Agent; 'https:': https.Agent };

  constructor(options: SenderOptions) {
    const agent = { keepAlive: true, maxFreeSockets: options.idlePerReceiver, timeout: options.idleMs, scheduling: 'lifo' as const };
    this.agents = { 'http:': new http.Agent(agent), 'https:': new https.Agent(agent) };
  }

  /**
   * One attempt: POST `body` to `url`, signed, giving up after `timeoutMs` from the start (connection, answer
   * and its body), so a receiver that hangs costs one timeout and holds up nothing else. Only a 2xx is a
   * delivery; a redirect is not followed.
   */
  send(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<SendOutcome> {
    return new Promise((resolve) => {
      let outcome: SendOutcome | undefined;
      let answered: SendOutcome | undefined;
      const finish = (result: SendOutcome) => {
        if (outcome) return;
        outcome = result;
        clearTimeout(timer);
        resolve(result);
      };
      let req: http.ClientRequest;
      try {
        const target = new URL(url);
        const client = target.protocol === 'https:' ? https : http;
        req = client.request(
          target,
          {
            method: 'POST',
            agent: this.agents[target.protocol === 'https:' ? 'https:' : 'http:'],
            headers: {
              'Content-Type': 'application/json',
              'Content-Length': Buffer.byteLength(body),
              'User-Agent': 'flagops-webhooks',
              ...headers,
            },
          },
          (res) => {
            const status = res.statusCode ?? 0;
            const result: SendOutcome =
              status >= 200 && status < 300 ? { ok: true } : { ok: false, error: `the receiver answered ${status}` };
            answered = result;
            // The status decides; the body is read to its end only so the connection can carry the next delivery.
            const done = () => finish(result);
            res.on('end', done);
            res.on('error', done);
            res.on('close', done);
            res.resume();
          },
        );
      } catch (err) {
        // A URL or header Node will not send (checked when the webhook was made, so not expected): a failed attempt.
        resolve({ ok: false, error: `could not send: ${(err as Error).message}` });
        return;
      }
      const timer = setTimeout(() => {
        finish(answered ?? { ok: false, error: `no answer within ${timeoutMs} ms` });
        req.destroy();
      }, timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) =>
        finish({ ok: false, error: `could not reach the receiver: ${err.code ?? err.message}` }),
      );
      req.end(body);
    });
  }

  /** Closes every connection, those of attempts under way included (they end as failed, unrecorded). */
  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
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
