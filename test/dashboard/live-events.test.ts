import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { pushEdit } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { addUser, type SignedIn, signIn } from './helpers/dashboard-session.js';

/** Reads a Server-Sent Events response and collects its events as they arrive. */
async function openEvents(url: string, cookie: string) {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { cookie, accept: 'text/event-stream' }, signal: controller.signal });
  const events: Array<{ event: string; data: Json }> = [];
  let ended = false;
  const reading = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      // aborted by the test
    }
    ended = true;
  })();
  return {
    res,
    events,
    ended: () => ended,
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

describe('live updates for dashboard pages (GET /dashboard/api/events)', () => {
  let svc: TestService;
  let api: HttpClient;
  let alice: SignedIn;
  let flag: Json;
  const url = () => `${svc.controlUrl}/dashboard/api/events`;

  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(api, 'shop');
    flag = await createFlag(api, project.id, { key: 'checkout-v2' });
    await addUser(svc, 'alice', 'Alice Martin');
    alice = await signIn(svc.controlUrl, 'alice');
  }, 60_000);

  afterAll(async () => {
    await svc?.stop();
  });

  it('needs a signed-in session: no cookie or a key is 401, and nothing streams', async () => {
    expect((await fetch(url())).status).toBe(401);
    const withKey = await fetch(url(), { headers: { authorization: `Bearer ${svc.admin}` } });
    expect(withKey.status).toBe(401);
  });

  it('announces the current commit at once, then every move of main: an agent kill and a git push', async () => {
    const stream = await openEvents(url(), alice.cookie);
    try {
      expect(stream.res.status).toBe(200);
      expect(stream.res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      await expect.poll(() => stream.events.length).toBe(1);
      expect(stream.events[0]).toEqual({ event: 'moved', data: { commit: expect.stringMatching(/^[0-9a-f]{40}$/) } });

      const agent = httpClient(svc.controlUrl, svc.agent);
      expect((await agent.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, {})).status).toBe(200);
      await expect.poll(() => stream.events.length).toBe(2);
      const afterKill = stream.events[1].data.commit;
      expect(afterKill).not.toBe(stream.events[0].data.commit);

      pushEdit(
        svc.gitdir(),
        (checkout) => writeFileSync(path.join(checkout, 'README.md'), 'pushed by an engineer\n'),
        'a push from a checkout',
      );
      await expect.poll(() => stream.events.length, { timeout: 10_000 }).toBe(3);
      expect(stream.events[2].data.commit).not.toBe(afterKill);
    } finally {
      await stream.close();
    }
  });

  it('is bounded: a session may hold 16 streams, the next is refused with 503 and Retry-After', async () => {
    const streams = await Promise.all(Array.from({ length: 16 }, () => openEvents(url(), alice.cookie)));
    try {
      expect(streams.map((s) => s.res.status)).toEqual(Array(16).fill(200));
      const refused = await fetch(url(), { headers: { cookie: alice.cookie } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect((await refused.json()).error.code).toBe('unavailable');
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
  });

  it('refuses a session that signed out', async () => {
    await addUser(svc, 'bob', 'Bob Stone');
    const bob = await signIn(svc.controlUrl, 'bob');
    const signOut = await fetch(`${svc.controlUrl}/dashboard/api/session`, {
      method: 'DELETE',
      headers: { cookie: bob.cookie, origin: svc.controlUrl, 'sec-fetch-site': 'same-origin', 'x-csrf-token': bob.csrfToken },
    });
    expect(signOut.status).toBeLessThan(300);
    expect((await fetch(url(), { headers: { cookie: bob.cookie } })).status).toBe(401);
  });

  it('ends every stream when the service stops, so the stop does not wait for pages', async () => {
    const stream = await openEvents(url(), alice.cookie);
    await expect.poll(() => stream.events.length).toBe(1);
    await svc.stop();
    await expect.poll(() => stream.ended()).toBe(true);
  });
});
