import { rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { until } from '../helpers/deadlines.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient } from '../helpers/http-client.js';
import { remoteConfig, startGitServer } from './git-server.js';

/**
 * A proposal opened through another control plane a moment ago: its branch is on the git host and not yet here.
 * Asked for it, a control plane fetches the branch, also while its main holds a kill the host has not taken
 * (then no pull can bring main up to the host, and the branch would otherwise wait for one).
 */
describe('a proposal whose branch is on the git host and not yet here', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let dataDir: string;
  let service: Service;
  let admin: HttpClient;
  const adminKey = generateKey('admin');

  beforeAll(async () => {
    host = await startGitServer();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-remote-proposal-'));
    service = await startService(remoteConfig(dataDir, host.url, adminKey), silentLogger);
    admin = httpClient(service.controlUrl, adminKey);
  });
  afterAll(async () => {
    await service?.stop();
    await host?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('is found, read and rejected, while main holds a kill the host refuses', async () => {
    const project = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    const reviewed = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'reviewed' })).body;
    const killed = (await admin.post(`/api/v1/projects/${project.id}/flags`, { key: 'killed' })).body;
    expect((await admin.patch(`/api/v1/projects/${project.id}`, { requireApproval: { prod: ['admin'] } })).status).toBe(200);
    const proposed = await admin.put(`/api/v1/flags/${reviewed.id}/environments/prod/config`, { rolloutPct: 5 });
    expect(proposed.status).toBe(202);
    const { id } = proposed.body.proposal;
    // As another control plane would have it: on the host, not here.
    const ref = `refs/heads/proposals/${id}`;
    git(service.repos.gitdirOf('acme'), 'update-ref', '-d', ref);
    // The host takes branches but refuses main for now, so the kill below is held here and main cannot be pulled.
    const hook = path.join(host.gitdir, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\nwhile read old new ref; do [ "$ref" = refs/heads/main ] && exit 1; done\nexit 0\n', { mode: 0o755 });
    try {
      expect((await admin.post(`/api/v1/flags/${killed.id}/environments/prod/kill`, { reason: 'incident' })).status).toBe(200);
      await until(
        async () => (await admin.get('/healthz')).body.gitRemote,
        (remote) => remote.holdingKills === true,
      );
      const read = await admin.get(`/api/v1/proposals/${id}`);
      expect([read.status, read.body.status]).toEqual([200, 'open']);
      git(service.repos.gitdirOf('acme'), 'update-ref', '-d', ref);
      const rejected = await admin.post(`/api/v1/proposals/${id}/reject`, { reason: 'not now' });
      expect([rejected.status, rejected.body.status]).toEqual([200, 'rejected']);
      expect(git(host.gitdir, 'rev-parse', ref)).toBe(git(service.repos.gitdirOf('acme'), 'rev-parse', ref));
    } finally {
      rmSync(hook);
    }
    // An id no control plane made is still not found.
    expect((await admin.get('/api/v1/proposals/aaaaaaaaaaaa')).status).toBe(404);
    await until(
      async () => (await admin.get('/healthz')).body.gitRemote,
      (remote) => remote.holdingKills === false,
    );
  }, 60_000);
});
