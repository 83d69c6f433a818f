import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEADERS_TIMEOUT_MS } from '../../src/foundations/http/connection-limits.js';
import { bundleMain, freePort, waitHealthy } from './service-process.js';

/** The service's open-file limit here: its evaluation port holds 240 connections, its control port 80. */
const OPEN_FILES = 400;
const EVALUATION_CAP = 240;
const ADMIN = 'svc_adm_connectionfloodadmin000000001';

/** `npm start` with its soft and hard open-file limits lowered, as `ulimit -n` leaves a shell's children. */
function startLimited(entry: string, env: Record<string, string>): { child: ChildProcess; stderr: string[] } {
  const stderr: string[] = [];
  const child = spawn('/bin/sh', ['-c', `ulimit -n ${OPEN_FILES} && exec "$0" "$@"`, process.execPath, entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  return { child, stderr };
}

/** POSTs JSON on a connection of its own (fetch would reuse a kept-alive one): status and body, or undefined. */
function postOnNewConnection(url: string, token: string, body: unknown): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      timeout: 2_000,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk) => {
        text += String(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(JSON.stringify(body));
  });
}

/** Opens a connection that sends nothing; resolves once connected, with whether it is still open. */
function idleConnection(port: number): Promise<{ socket: net.Socket; open: () => boolean }> {
  return new Promise((resolve) => {
    let closed = false;
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.on('error', () => {});
    socket.resume(); // reads what the service answers, and so sees it close the connection
    socket.on('close', () => {
      closed = true;
    });
    socket.once('connect', () => resolve({ socket, open: () => !closed }));
    socket.once('close', () => resolve({ socket, open: () => false }));
  });
}

describe('a flood of idle connections', () => {
  let dir: string;
  let bundle: Awaited<ReturnType<typeof bundleMain>>;
  let service: { child: ChildProcess; stderr: string[] };
  let control: string;
  let evaluation: string;
  let flag: string;
  let sdk: string;
  const admin = { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' };
  const post = async (url: string, body?: unknown, headers: Record<string, string> = admin) =>
    fetch(url, {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
  const evaluate = () =>
    post(`${evaluation}/v1/evaluate`, { key: 'checkout', context: { userId: 'u-1' } }, { ...admin, Authorization: `Bearer ${sdk}` });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-flood-'));
    bundle = await bundleMain();
    const [controlPort, evalPort] = [await freePort(), await freePort()];
    control = `http://127.0.0.1:${controlPort}`;
    evaluation = `http://127.0.0.1:${evalPort}`;
    service = startLimited(bundle.entry, {
      FLAGOPS_DATA_DIR: path.join(dir, 'data'),
      FLAGOPS_CONTROL_PORT: String(controlPort),
      FLAGOPS_EVAL_PORT: String(evalPort),
      FLAGOPS_BOOTSTRAP_KEYS: `acme:${ADMIN}`,
    });
    await waitHealthy(`${control}/healthz`, service.child);
    const project = (await (await post(`${control}/api/v1/projects`, { name: 'Shop', slug: 'shop' })).json()) as { id: string };
    flag = (
      (await (await post(`${control}/api/v1/projects/${project.id}/flags`, { key: 'checkout', name: 'Checkout' })).json()) as { id: string }
    ).id;
    sdk = (
      (await (await post(`${control}/api/v1/keys`, { kind: 'sdk', projectId: project.id, environment: 'dev' })).json()) as { key: string }
    ).key;
    expect((await evaluate()).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    service?.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    await bundle?.remove();
  });

  it('on the evaluation port leaves the kill switch answering, and evaluations once the idle ones time out', async () => {
    const flood = await Promise.all(Array.from({ length: OPEN_FILES }, () => idleConnection(Number(new URL(evaluation).port))));
    try {
      await new Promise((r) => setTimeout(r, 500));
      const kill = await post(`${control}/api/v1/flags/${flag}/environments/dev/kill`);
      expect(kill.status).toBe(200);
      expect((await fetch(`${control}/healthz`, { signal: AbortSignal.timeout(5_000) })).status).toBe(200);

      // The port holds its share of the open files (this test's own keep-alive connection among them); the rest
      // are closed as soon as accepted.
      const held = flood.filter((c) => c.open()).length;
      expect(held).toBeLessThanOrEqual(EVALUATION_CAP);
      expect(held).toBeGreaterThan(EVALUATION_CAP - 5);
      const metrics = await (await fetch(`${control}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
      expect(Number(/^flagops_connections_refused_total\{server="evaluation"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
      const refusals = service.stderr
        .join('')
        .split('\n')
        .filter((line) => line.includes('a connection was refused'));
      expect(refusals).toHaveLength(1);

      // Connections that send no request are closed after the headers timeout; the port then answers again.
      const deadline = Date.now() + HEADERS_TIMEOUT_MS + 5_000;
      let answer: { value: boolean; reason: string } | undefined;
      while (!answer && Date.now() < deadline) {
        const res = await postOnNewConnection(`${evaluation}/v1/evaluate`, sdk, { key: 'checkout', context: { userId: 'u-1' } });
        if (res?.status === 200) answer = (JSON.parse(res.body) as Record<string, { value: boolean; reason: string }>).checkout;
        else await new Promise((r) => setTimeout(r, 250));
      }
      expect(answer).toMatchObject({ value: false, reason: 'killed' });
      // Timed out together, but closed one by one: on a busy machine the port may answer before the last is.
      await expect.poll(() => flood.filter((c) => c.open()).length, { timeout: 5_000 }).toBe(0);
    } finally {
      for (const c of flood) c.socket.destroy();
    }
  }, 60_000);

  it('closes a connection dripping header lines within the headers timeout, not a stream of flag changes', async () => {
    const stream = await fetch(`${evaluation}/v1/stream`, { headers: { Authorization: `Bearer ${sdk}` } });
    expect(stream.status).toBe(200);
    const streamReader = stream.body!.getReader();
    let streamEnded = false;
    void (async () => {
      while (!(await streamReader.read().catch(() => ({ done: true }))).done);
      streamEnded = true;
    })();

    const started = Date.now();
    // A client that never closes its side either: the service must close the connection itself.
    const drip = net.connect({ port: Number(new URL(evaluation).port), host: '127.0.0.1', allowHalfOpen: true });
    drip.on('error', () => {});
    let answer = '';
    drip.on('data', (chunk) => {
      answer += String(chunk);
    });
    drip.write('POST /v1/evaluate HTTP/1.1\r\nHost: x\r\n');
    const dripping = setInterval(() => drip.writable && drip.write('X-a: b\r\n'), 1_000);
    const closedAfter = await new Promise<number>((resolve) => drip.once('close', () => resolve(Date.now() - started)));
    clearInterval(dripping);

    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfter).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 500);
    expect(closedAfter).toBeLessThan(HEADERS_TIMEOUT_MS + 5_000);
    // The stream, open as long, is not a request still arriving: it goes on.
    expect(streamEnded).toBe(false);
    await streamReader.cancel();
  }, 30_000);
});
