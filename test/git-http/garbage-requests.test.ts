import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/foundations/log/logger.js';
import { createProject } from '../control-plane/fixtures.js';
import { httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';
import { eventually, gitProcessesIn } from './upload-pack-client.js';

/** POSTs `body` to a git service; what came back before the answer ended or `timeoutMs` passed (then it is cut). */
function post(url: string, key: string, body: Buffer, timeoutMs: number): Promise<{ status: number; body: string; timedOut: boolean }> {
  const target = new URL(url);
  const service = target.pathname.split('/').pop();
  return new Promise((resolve) => {
    let status = 0;
    let text = '';
    const req = http.request(target, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${key}`, 'content-type': `application/x-${service}-request` },
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve({ status, body: text, timedOut: true });
    }, timeoutMs);
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      res.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      res.on('error', () => {});
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status, body: text, timedOut: false });
      });
    });
    req.on('error', () => {
      clearTimeout(timer);
      resolve({ status, body: text, timedOut: false });
    });
    req.end(body);
  });
}

describe('git requests whose body is not git’s', () => {
  let svc: TestService;
  let work: string;
  const logLines: string[] = [];
  const url = (service: string) => `${svc.controlUrl}/git/acme.git/${service}`;

  beforeAll(async () => {
    svc = await startTestService({ logger: createLogger({ level: 'warn', write: (line) => logLines.push(line) }) });
    await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-garbage-'));
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('five garbage pushes at once (clients giving up after 3 s) are answered, and git over HTTP keeps working', async () => {
    const garbage = randomBytes(11 * 1024 * 1024);
    await Promise.all(Array.from({ length: 5 }, () => post(url('git-receive-pack'), svc.admin, garbage, 3_000)));
    const bearer = ['-c', `http.extraHeader=Authorization: Bearer ${svc.admin}`];
    const started = Date.now();
    const listed = await gitAsync(work, ...bearer, 'ls-remote', `${svc.controlUrl}/git/acme.git`);
    expect(listed.stderr).toBe('');
    expect(listed.stdout).toMatch(/\trefs\/heads\/main$/m);
    expect(Date.now() - started).toBeLessThan(5_000);
    const cloned = await gitAsync(work, ...bearer, 'clone', '--quiet', `${svc.controlUrl}/git/acme.git`, path.join(work, 'clone'));
    expect(cloned.ok).toBe(true);
  });

  it.each([
    ['a large garbage push', 'git-receive-pack', 11 * 1024 * 1024],
    ['a small garbage push', 'git-receive-pack', 1024],
    ['a large garbage fetch', 'git-upload-pack', 5 * 1024 * 1024],
    ['a small garbage fetch', 'git-upload-pack', 1024],
  ])('%s is refused at once with an error status and its reason', async (_name, service, size) => {
    const started = Date.now();
    const answer = await post(url(service), svc.admin, randomBytes(size), 10_000);
    expect(answer.timedOut).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toEqual({
      code: 'invalid_input',
      message: expect.stringMatching(/^the request body is not one git can read: protocol error: bad line length character:/),
    });
    expect(logLines.map((line) => JSON.parse(line)).filter((r) => r.msg === 'git http-backend failed').length).toBeGreaterThan(0);
  });

  it('a push whose client goes away before its body is whole stops its git', async () => {
    const { hostname, port } = new URL(svc.controlUrl);
    const socket = net.connect(Number(port), hostname);
    socket.on('error', () => {});
    // A body of 100 kB of which one pkt-line comes: git waits for the rest.
    socket.write(
      `POST /git/acme.git/git-receive-pack HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${svc.admin}\r\n` +
        'Content-Type: application/x-git-receive-pack-request\r\nContent-Length: 100000\r\n\r\n0008abc',
    );
    expect(await eventually(() => gitProcessesIn(svc.gitdir()).length > 0)).toBe(true);
    socket.destroy();
    expect(await eventually(() => gitProcessesIn(svc.gitdir()).length === 0)).toBe(true);
  });
});
