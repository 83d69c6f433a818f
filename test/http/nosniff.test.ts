import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Replica, startReplica } from '../../src/apps/replica/start-replica.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { httpClient } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';

describe('X-Content-Type-Options: nosniff on every answer of every port', () => {
  let svc: TestService;
  let replica: Replica;
  let replicaDir: string;
  let sdkKey: string;

  beforeAll(async () => {
    svc = await startTestService();
    const api = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(api, 'shop');
    await createFlag(api, project.id, { key: 'checkout' });
    sdkKey = (await api.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    replicaDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-nosniff-'));
    replica = await startReplica({
      upstreams: [svc.controlUrl],
      token: svc.admin,
      host: '127.0.0.1',
      port: 0,
      dataDir: replicaDir,
      logger: silentLogger,
    });
  });
  afterAll(async () => {
    await replica?.stop();
    await svc?.stop();
    if (replicaDir) await rm(replicaDir, { recursive: true, force: true });
  });

  const json = { 'content-type': 'application/json' };
  const cases: Array<[string, () => [string, RequestInit]]> = [
    ['control plane: a list', () => [`${svc.controlUrl}/api/v1/projects`, { headers: { authorization: `Bearer ${svc.admin}` } }]],
    ['control plane: 401', () => [`${svc.controlUrl}/api/v1/projects`, {}]],
    [
      'control plane: 400',
      () => [
        `${svc.controlUrl}/api/v1/projects`,
        { method: 'POST', headers: { authorization: `Bearer ${svc.admin}`, ...json }, body: '{' },
      ],
    ],
    ['control plane: 404', () => [`${svc.controlUrl}/api/v1/nothing`, {}]],
    ['control plane: /healthz', () => [`${svc.controlUrl}/healthz`, {}]],
    [
      'evaluation: evaluate (fast path)',
      () => [
        `${svc.evalUrl}/v1/evaluate`,
        { method: 'POST', headers: { authorization: `Bearer ${sdkKey}`, ...json }, body: '{"key":"checkout"}' },
      ],
    ],
    [
      'evaluation: evaluate 400 (fast path)',
      () => [`${svc.evalUrl}/v1/evaluate`, { method: 'POST', headers: { authorization: `Bearer ${sdkKey}`, ...json }, body: '{}' }],
    ],
    [
      'evaluation: evaluate 401 (fast path)',
      () => [`${svc.evalUrl}/v1/evaluate`, { method: 'POST', headers: json, body: '{"key":"checkout"}' }],
    ],
    ['evaluation: snapshot (fast path)', () => [`${svc.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${sdkKey}` } }]],
    [
      'evaluation: snapshot 304 (fast path)',
      () => [`${svc.evalUrl}/v1/snapshot`, { headers: { authorization: `Bearer ${sdkKey}`, 'if-none-match': '*' } }],
    ],
    [
      'evaluation: evaluate through Koa',
      () => [
        `${svc.evalUrl}/v1/evaluate?via=koa`,
        { method: 'POST', headers: { authorization: `Bearer ${sdkKey}`, ...json }, body: '{"key":"checkout"}' },
      ],
    ],
    [
      'evaluation: OFREP',
      () => [
        `${svc.evalUrl}/ofrep/v1/evaluate/flags`,
        { method: 'POST', headers: { authorization: `Bearer ${sdkKey}`, ...json }, body: '{}' },
      ],
    ],
    [
      'evaluation: counts 400',
      () => [`${svc.evalUrl}/v1/counts`, { method: 'POST', headers: { authorization: `Bearer ${sdkKey}`, ...json }, body: '{}' }],
    ],
    ['evaluation: 404', () => [`${svc.evalUrl}/nothing`, {}]],
    [
      'replica: evaluate',
      () => [
        `${replica.url}/v1/evaluate`,
        { method: 'POST', headers: { authorization: `Bearer ${sdkKey}`, ...json }, body: '{"key":"checkout"}' },
      ],
    ],
    ['replica: 401', () => [`${replica.url}/v1/snapshot`, {}]],
  ];

  for (const [name, request] of cases) {
    it(name, async () => {
      const [url, init] = request();
      const res = await fetch(url, init);
      await res.arrayBuffer();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    });
  }
});
