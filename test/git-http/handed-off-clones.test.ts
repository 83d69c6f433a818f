import { execFileSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/foundations/log/logger.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git, gitWith } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsyncWith } from './git-async.js';
import { addBigBranch, eventually, gitProcessesIn, postUploadPack, readToEnd, wantBody } from './upload-pack-client.js';

/** The HTTP exchange of a git command (GIT_TRACE_CURL): what it sent and received, headers only. */
const TRACE = { GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' };

/** The response headers git received for its git-upload-pack POSTs, lower-cased, from a GIT_TRACE_CURL trace. */
function uploadPackExchanges(trace: string): { sent: string[]; received: string[] }[] {
  const exchanges: { sent: string[]; received: string[] }[] = [];
  let current: { sent: string[]; received: string[] } | undefined;
  for (const line of trace.split('\n')) {
    const sent = /=> Send header: (.*)$/.exec(line)?.[1]?.trim();
    const received = /<= Recv header: (.*)$/.exec(line)?.[1]?.trim();
    if (sent?.startsWith('POST ') && sent.includes('git-upload-pack')) {
      current = { sent: [], received: [] };
      exchanges.push(current);
    } else if (sent?.includes(' ') && /^(GET|POST) /.test(sent)) current = undefined;
    if (!current) continue;
    if (sent) current.sent.push(sent.toLowerCase());
    if (received) current.received.push(received.toLowerCase());
  }
  return exchanges;
}

describe('clones and fetches answered on the client’s own connection by the git runner', () => {
  let svc: TestService;
  let admin: HttpClient;
  let project: Json;
  let work: string;
  const logLines: string[] = [];
  const remote = () => `${svc.controlUrl.replace('://', `://engineer:${svc.admin}@`)}/git/acme.git`;

  beforeAll(async () => {
    svc = await startTestService({ logger: createLogger({ level: 'warn', write: (line) => logLines.push(line) }) });
    admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-handoff-'));
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('git clone and git fetch (with a gzip-encoded negotiation) get the repository whole', async () => {
    await createFlag(admin, project.id, { key: 'first' });
    const checkout = path.join(work, 'clone');
    const cloned = await gitAsyncWith(work, TRACE, 'clone', '--quiet', remote(), checkout);
    expect(cloned.ok).toBe(true);
    expect(git(checkout, 'rev-parse', 'HEAD')).toBe(git(svc.gitdir(), 'rev-parse', 'main'));
    git(checkout, 'fsck', '--strict');
    // The pack came from the git runner on the client's connection, which closes after it.
    const [clone] = uploadPackExchanges(cloned.stderr);
    expect(clone.received).toContain('connection: close');
    expect(clone.received).toContain('transfer-encoding: chunked');
    expect(clone.received).toContain('x-content-type-options: nosniff');

    // Local commits the service does not have, newer than its own: git sends them as haves first, 16, then 48
    // (each round repeats the last), and gzips a negotiation over 1 KiB.
    const later = { GIT_COMMITTER_DATE: '2090-01-01 00:00:00 +0000', GIT_AUTHOR_DATE: '2090-01-01 00:00:00 +0000' };
    for (let i = 0; i < 40; i++) gitWith(checkout, { env: later }, 'commit', '--quiet', '--allow-empty', '-m', `local ${i}`);
    await createFlag(admin, project.id, { key: 'second' });
    const fetched = await gitAsyncWith(checkout, TRACE, 'fetch', '--quiet', 'origin');
    expect(fetched.ok).toBe(true);
    expect(git(checkout, 'rev-parse', 'origin/main')).toBe(git(svc.gitdir(), 'rev-parse', 'main'));
    expect(git(checkout, 'show', 'origin/main:projects/shop/flags/second.yaml')).toContain('key: second');
    git(checkout, 'fsck', '--strict');
    const exchanges = uploadPackExchanges(fetched.stderr);
    expect(exchanges.some((e) => e.sent.includes('content-encoding: gzip') && e.received.includes('connection: close'))).toBe(true);
  });

  it('is counted in the request metrics with the status git answered, and a failed git is logged as for any git request', async () => {
    const served = async () => {
      const text = await (await fetch(`${svc.controlUrl}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith('flagops_http_request_duration_seconds_count{server="control",route="/git/:repo/{*rest}",status="200"}'));
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await served();
    // An object the repository does not have: git answers 200, then refuses it and exits with an error.
    const { res } = await postUploadPack(`${svc.controlUrl}/git/acme.git/git-upload-pack`, wantBody('a'.repeat(40)), svc.admin);
    expect(res.headers.connection).toBe('close');
    await readToEnd(res);
    expect(await eventually(async () => (await served()) === before + 1)).toBe(true);
    // git's exit (and so the log line) may come after the answer ended.
    expect(await eventually(() => logLines.some((line) => line.includes('git http-backend failed')))).toBe(true);
    const failed = logLines.map((line) => JSON.parse(line)).find((r) => r.msg === 'git http-backend failed');
    expect(failed).toMatchObject({ level: 'warn', path: '/acme.git/git-upload-pack' });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain('not our ref');
  });
});

describe('a handed-off clone and the cap on git processes', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ gitProcesses: { max: 1, queue: 0 } });
    await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
  });
  afterAll(() => svc.stop());

  it('a client that goes away mid-clone stops its git and frees its place; meanwhile the cap answers 503', async () => {
    const big = addBigBranch(svc.gitdir(), 24);
    const { res, req } = await postUploadPack(`${svc.controlUrl}/git/acme.git/git-upload-pack`, wantBody(big), svc.admin);
    expect(res.statusCode).toBe(200);
    expect(res.headers.connection).toBe('close');
    // Read a little, then stop reading: git waits for the client, holding the only git place.
    await new Promise((resolve) => res.once('data', resolve));
    res.pause();
    expect(gitProcessesIn(svc.gitdir()).length).toBeGreaterThan(0);
    const refs = () =>
      fetch(`${svc.controlUrl}/git/acme.git/info/refs?service=git-upload-pack`, {
        headers: { authorization: `Basic ${Buffer.from(`x:${svc.admin}`).toString('base64')}` },
      });
    const turnedAway = await refs();
    expect(turnedAway.status).toBe(503);
    expect(turnedAway.headers.get('retry-after')).toBe('5');

    req.destroy();
    expect(await eventually(() => gitProcessesIn(svc.gitdir()).length === 0)).toBe(true);
    expect(await eventually(async () => (await refs()).status === 200)).toBe(true);
  });
});

/**
 * Sends a request to create a project to the service at `url` with only the start of its body, so that it is in
 * flight until `finish` sends the rest. Resolves once the service is answering it; `closed` resolves when that
 * connection closes, `answer` is what the server sent on it.
 */
async function requestInFlight(url: string, key: string): Promise<{ closed: Promise<void>; answer(): string; finish(): void }> {
  const { hostname, port } = new URL(url);
  const marker = `in-flight-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const started = new Promise<void>((resolve) => {
    const onStart = (message: unknown) => {
      if ((message as { request: IncomingMessage }).request.headers['x-test'] !== marker) return;
      diagnostics.unsubscribe('http.server.request.start', onStart);
      resolve();
    };
    diagnostics.subscribe('http.server.request.start', onStart);
  });
  const socket = net.connect(Number(port), hostname);
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk));
  socket.on('error', () => {}); // a reset when the server cuts it: the close that follows is what counts
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    `POST /api/v1/projects HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nX-Test: ${marker}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":',
  );
  await started;
  // The 92 bytes the Content-Length still promises (JSON allows the trailing spaces).
  const rest = '"Stopping","slug":"stopping"}'.padEnd(92, ' ');
  return { closed, answer: () => answer, finish: () => socket.write(rest) };
}

describe('a clone in flight when the service stops', () => {
  it("is not cut by a signal to the service's whole process group: the git runner leaves its stop to the service", async () => {
    const svc = await startTestService();
    try {
      await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
      const big = addBigBranch(svc.gitdir(), 16);
      const { res } = await postUploadPack(`${svc.controlUrl}/git/acme.git/git-upload-pack`, wantBody(big), svc.admin);
      await new Promise((resolve) => res.once('data', resolve));
      res.pause();
      // What systemd or Ctrl-C does: every process of the group gets the signal. The runner is in a group of its
      // own; sent to it all the same, the signal must not end it.
      const runner = execFileSync('pgrep', ['-P', String(process.pid), '-f', 'git-runner-process'], { encoding: 'utf8' }).trim();
      expect(runner).toMatch(/^\d+$/);
      expect(execFileSync('ps', ['-o', 'pgid=', '-p', runner], { encoding: 'utf8' }).trim()).toBe(runner);
      process.kill(Number(runner), 'SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 200));
      res.resume();
      const { body, complete } = await readToEnd(res);
      expect(complete).toBe(true);
      expect(body.length).toBeGreaterThan(15 * 1024 * 1024);
    } finally {
      await svc.stop();
    }
  });

  it('once answered, is no longer in flight: a stop after clones and fetches neither waits for them nor says it cut them off', async () => {
    const lines: string[] = [];
    const svc = await startTestService({ logger: createLogger({ level: 'warn', write: (line) => lines.push(line) }) });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flagops-handoff-stop-'));
    try {
      await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
      const url = `${svc.controlUrl.replace('://', `://engineer:${svc.admin}@`)}/git/acme.git`;
      expect((await gitAsyncWith(dir, {}, 'clone', '--quiet', url, path.join(dir, 'clone'))).ok).toBe(true);
      expect((await gitAsyncWith(path.join(dir, 'clone'), {}, 'fetch', '--quiet', 'origin')).ok).toBe(true);
      await svc.service.stop();
      expect(lines.filter((line) => line.includes('still in flight'))).toEqual([]);
    } finally {
      await svc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is answered whole, and the stop waits for it', async () => {
    const svc = await startTestService();
    try {
      await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
      const big = addBigBranch(svc.gitdir(), 16);
      const { res } = await postUploadPack(`${svc.controlUrl}/git/acme.git/git-upload-pack`, wantBody(big), svc.admin);
      expect(res.headers.connection).toBe('close');
      await new Promise((resolve) => res.once('data', resolve));
      res.pause();
      const inFlight = await requestInFlight(svc.controlUrl, svc.admin);
      let stopped = false;
      const stopping = svc.service.stop().then(() => {
        stopped = true;
      });
      // A request in flight when the stop began is answered, its body coming only after, and its connection closed.
      inFlight.finish();
      await inFlight.closed;
      expect(inFlight.answer()).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
      expect(inFlight.answer()).toContain('\r\nConnection: close\r\n');
      expect(stopped).toBe(false); // waiting for the clone the client has not read yet
      res.resume();
      const { body, complete } = await readToEnd(res);
      expect(complete).toBe(true);
      expect(body.length).toBeGreaterThan(15 * 1024 * 1024);
      await stopping;
      expect(stopped).toBe(true);
    } finally {
      await svc.stop();
    }
  });
});
