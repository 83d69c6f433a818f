import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { httpClient } from '../helpers/http-client.js';
import { bundleMain, freePort, startProcess, waitHealthy } from './service-process.js';

const ADMIN = 'svc_adm_stoppingtestadmin00000000001';

/** What a request got: its status and Connection header, or the error its connection ended with. */
type Outcome = { status: number; connection: string | undefined; at: number } | { error: string; at: number };

/** A PUT of `body` on a keep-alive connection of its own. */
function put(url: string, body: unknown): Promise<Outcome> {
  const agent = new http.Agent({ keepAlive: true });
  const text = JSON.stringify(body);
  return new Promise<Outcome>((resolve) => {
    const req = http.request(
      url,
      {
        method: 'PUT',
        agent,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, at: Date.now() }));
      },
    );
    req.on('error', (err) => resolve({ error: err.message, at: Date.now() }));
    req.end(text);
  }).finally(() => agent.destroy());
}

/** A raw connection to `port`, with everything it received and whether it closed. */
function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const state = { received: '', closedAt: undefined as number | undefined };
  socket.on('data', (chunk) => {
    state.received += String(chunk);
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    state.closedAt = Date.now();
  });
  return { socket, state, connected: new Promise((resolve) => socket.once('connect', resolve)) };
}

function putRequest(flagId: string, body: unknown): string {
  const text = JSON.stringify(body);
  return (
    `PUT /api/v1/flags/${flagId}/environments/staging/config HTTP/1.1\r\nHost: localhost\r\n` +
    `Authorization: Bearer ${ADMIN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a service stopped by SIGTERM while writes are in flight', () => {
  let dir: string;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-stopping-'));
    bundle = await bundleMain();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await bundle.remove();
  });

  it('answers every write it took, each answered 200 on main, and takes no request after the stop began', async () => {
    const dataDir = path.join(dir, 'data');
    const [control, evaluation] = [await freePort(), await freePort()];
    const { child, stderr, exit } = startProcess(bundle.entry, {
      FLAGOPS_DATA_DIR: dataDir,
      FLAGOPS_CONTROL_PORT: String(control),
      FLAGOPS_EVAL_PORT: String(evaluation),
      FLAGOPS_BOOTSTRAP_KEYS: `acme:${ADMIN}`,
    });
    try {
      await waitHealthy(`http://127.0.0.1:${control}/healthz`, child);
      const admin = httpClient(`http://127.0.0.1:${control}`, ADMIN);
      const project = await createProject(admin, 'shop');
      const flag = await createFlag(admin, project.id, { key: 'checkout' });
      const configUrl = `http://127.0.0.1:${control}/api/v1/flags/${flag.id}/environments/staging/config`;

      // A kept-alive connection with nothing in flight when the stop begins.
      const idle = rawConnection(control);
      await idle.connected;
      idle.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      while (!idle.state.received.includes('\r\n\r\n')) await sleep(10);

      // Another git writer holds main's lock, so the writes stay in flight until it is removed.
      const lock = path.join(dataDir, 'repos', 'acme.git', 'refs', 'heads', 'main.lock');
      await writeFile(lock, '');
      const writes = [11, 12, 13, 14].map((pct) => put(configUrl, { enabled: true, rolloutPct: pct }));
      const pipelined = rawConnection(control);
      await pipelined.connected;
      pipelined.socket.write(putRequest(flag.id, { enabled: true, rolloutPct: 15 }));
      await sleep(500);

      child.kill('SIGTERM');
      const stopAt = Date.now();
      await sleep(300);
      // Sent on a kept-alive connection after the stop began: never taken.
      pipelined.socket.write(putRequest(flag.id, { enabled: true, rolloutPct: 16 }));
      await expect(fetch(`http://127.0.0.1:${control}/healthz`)).rejects.toThrow();
      // Past the moment the stop used to cut every connection off (2 s).
      await sleep(2_300);
      expect(idle.state.closedAt).toBeDefined();
      expect(idle.state.closedAt! - stopAt).toBeLessThan(2_000);
      await unlink(lock);

      const outcomes = await Promise.all(writes);
      expect(await exit).toBe(0);
      for (const outcome of outcomes) expect(outcome).toMatchObject({ status: expect.any(Number), connection: 'close' });
      const answered = outcomes.filter((o): o is Extract<Outcome, { status: number }> => 'status' in o && o.status === 200);
      expect(answered.length).toBeGreaterThan(0);
      for (const outcome of answered) expect(outcome.at - stopAt).toBeGreaterThan(2_000);

      // The pipelined connection got the answer to its first write, then closed: its second got none.
      while (pipelined.state.closedAt === undefined) await sleep(10);
      const statuses = [...pipelined.state.received.matchAll(/^HTTP\/1\.1 (\d+)/gm)].map((m) => Number(m[1]));
      expect(statuses[0]).toBeGreaterThan(0);
      expect(statuses.slice(1).every((s) => s === 503)).toBe(true);

      const history = git(path.join(dataDir, 'repos', 'acme.git'), 'log', '-p', 'main');
      const committed = (pct: number) => history.includes(`+rolloutPct: ${pct}\n`);
      outcomes.forEach((outcome, i) => {
        if ('status' in outcome && outcome.status === 200) expect(committed(11 + i)).toBe(true);
      });
      if (statuses[0] === 200) expect(committed(15)).toBe(true);
      expect(committed(16)).toBe(false);
      expect(stderr.join('')).not.toContain('"level":"error"');
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
