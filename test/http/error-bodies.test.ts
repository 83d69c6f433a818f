import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

/** Sends raw bytes and reads the whole answer (the server closes the connection after an error it cannot parse past). */
function raw(url: string, request: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(request));
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => {
      data += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const split = data.indexOf('\r\n\r\n');
      resolve({ status: Number(data.slice(9, 12)), headers: data.slice(0, split), body: data.slice(split + 4) });
    });
  });
}

describe('every error answer carries the { error: { code, message } } body', () => {
  let svc: TestService;
  let admin: HttpClient;
  let replica: Replica;
  let replicaDir: string;
  let urls: Array<[string, string]>;
  let flag: Json;

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    flag = await createFlag(admin, project.id, { key: 'checkout' });
    replicaDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-error-bodies-'));
    replica = await startReplica({
      upstreams: [svc.controlUrl],
      token: svc.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir: replicaDir,
      logger: silentLogger,
    });
    urls = [
      ['control plane', `${svc.controlUrl}/api/v1/audit`],
      ['evaluation', `${svc.evalUrl}/v1/snapshot`],
      ['replica', `${replica.url}/v1/snapshot`],
    ];
  }, 60_000);
  afterAll(async () => {
    await replica?.stop();
    await svc?.stop();
    if (replicaDir) await rm(replicaDir, { recursive: true, force: true });
  });

  it('431 for headers larger than the server takes (a 20,000-character query), naming what to shorten', async () => {
    for (const [, url] of urls) {
      const res = await fetch(`${url}?actor=${'a'.repeat(20_000)}`, { headers: { authorization: `Bearer ${svc.admin}` } });
      expect(res.status).toBe(431);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.json()).toEqual({
        error: { code: 'invalid_input', message: expect.stringContaining('the request line and headers are larger than') },
      });
    }
  });

  it('400 for a request that is not HTTP', async () => {
    for (const [, url] of urls) {
      const answer = await raw(url, 'HELLO THERE\r\n\r\n');
      expect(answer.status).toBe(400);
      expect(answer.headers).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'invalid_input', message: expect.stringContaining('not a valid HTTP request') },
      });
    }
  });

  it('a rollout plan whose steps would run past the year 9999 names the request field, not a file', async () => {
    const res = await admin.post(`/api/v1/flags/${flag.id}/environments/dev/rollout-plan`, {
      startPct: 10,
      stepPct: 10,
      every: '1d',
      startAt: '9999-12-30T00:00:00Z',
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_input');
    expect(res.body.error.message).toMatch(/^startAt: /);
    expect(res.body.error.message).not.toContain('projects/');
    expect(res.body.error.message).not.toContain('.yaml');
  });
});
