import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { backoffMs, signature, WebhookSender } from '../../src/features/webhooks/webhook-sender.js';

describe('backoffMs', () => {
  it('doubles with each failed attempt up to the cap, with jitter between half and all of the wait', () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, 1000, 60_000, () => 1))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(3, 1000, 60_000, () => 0)).toBe(2000);
    expect(backoffMs(20, 1000, 60_000, () => 1)).toBe(60_000);
  });
});

describe('signature', () => {
  it('is sha256= and the hex HMAC-SHA256 of the body (RFC 4231 test case 2)', () => {
    expect(signature('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });
});

describe('WebhookSender', () => {
  const closing: Array<() => void> = [];
  afterEach(() => {
    for (const close of closing.splice(0)) close();
  });

  async function server(handle: http.RequestListener) {
    const s = http.createServer(handle);
    let connections = 0;
    s.on('connection', () => connections++);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    closing.push(() => {
      s.closeAllConnections();
      s.close();
    });
    return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`, connections: () => connections };
  }

  function sender() {
    const s = new WebhookSender({ idlePerReceiver: 2, idleMs: 5_000 });
    closing.push(() => s.close());
    return s;
  }

  it('POSTs the body with its headers, and carries the next delivery on the same connection', async () => {
    const got: Array<{ body: string; headers: http.IncomingHttpHeaders }> = [];
    const receiver = await server((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push({ body, headers: req.headers });
        res.writeHead(204).end();
      });
    });
    const send = sender();
    for (let i = 0; i < 3; i++)
      expect(await send.send(receiver.url, `{"n":${i}}`, { 'X-Flagops-Event': 'audit' }, 2_000)).toEqual({ ok: true });
    expect(got.map((g) => g.body)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
    expect(got[0].headers).toMatchObject({ 'content-type': 'application/json', 'x-flagops-event': 'audit', 'content-length': '7' });
    expect(receiver.connections()).toBe(1);
  });

  it('takes the status of an answer whose body never ends, and names what failed otherwise', async () => {
    const trickle = await server((req, res) => {
      req.resume();
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial'); // and never the rest
    });
    const send = sender();
    expect(await send.send(trickle.url, '{}', {}, 300)).toEqual({ ok: true });
    const refusing = await server((_req, res) => res.writeHead(302, { Location: '/elsewhere' }).end());
    expect(await send.send(refusing.url, '{}', {}, 2_000)).toEqual({ ok: false, error: 'the receiver answered 302' });
    const gone = await server(() => {});
    closing.pop()?.(); // closed: nothing listens on its port any more
    expect(await send.send(gone.url, '{}', {}, 2_000)).toEqual({ ok: false, error: 'could not reach the receiver: ECONNREFUSED' });
  });
});
