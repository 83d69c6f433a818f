import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { type Service, startService } from '../../src/service.js';
import { gitAsync } from '../git-http/git-async.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { remoteConfig, startGitServer } from './git-server.js';

const SECRET = 'a-long-shared-webhook-secret';

// The tester's repro: a commit merged on the git host gives shop web's project id. web had it first and keeps
// serving to its SDK keys; shop is held back at its last valid state, and /healthz names shop's project.yaml.
describe('remote mode: a project given another project’s id on the git host', () => {
  let host: Awaited<ReturnType<typeof startGitServer>>;
  let dataDir: string;
  let work: string;
  let service: Service;
  let admin: HttpClient;
  let web: Json;
  let webSdk: HttpClient;
  let shopSdk: HttpClient;
  let webEtag: string | null;
  const adminKey = generateKey('admin');
  const shopFile = 'projects/shop/project.yaml';

  /** An engineer's commit (`edit` commits when no message is given) pushed straight to the git host, then the webhook. */
  async function hostCommit(edit: (checkout: string) => void, message?: string): Promise<void> {
    const checkout = path.join(work, `c-${Date.now()}-${Math.random().toString(36).slice(2)}`);
    expect((await gitAsync(work, 'clone', '--quiet', host.url, checkout)).ok).toBe(true);
    edit(checkout);
    if (message !== undefined) git(checkout, 'commit', '--quiet', '-am', message);
    expect((await gitAsync(checkout, 'push', '--quiet', 'origin', 'HEAD:main')).ok).toBe(true);
    const hook = await httpClient(service.controlUrl).request('POST', '/api/v1/hooks/git', {
      headers: { 'x-flagops-webhook-secret': SECRET, 'content-type': 'application/json' },
      rawBody: '{}',
    });
    expect(hook.body.outcome).toBe('fast-forwarded');
  }

  beforeAll(async () => {
    host = await startGitServer();
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-project-clash-work-'));
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'flagops-project-clash-'));
    service = await startService(
      remoteConfig(dataDir, host.url, adminKey, { gitRemote: { url: host.url, webhookSecret: SECRET, pollSeconds: 0 } }),
      silentLogger,
    );
    admin = httpClient(service.controlUrl, adminKey);
    const shop = (await admin.post('/api/v1/projects', { name: 'Shop', slug: 'shop' })).body;
    web = (await admin.post('/api/v1/projects', { name: 'Web', slug: 'web' })).body;
    await admin.post(`/api/v1/projects/${shop.id}/flags`, { key: 'checkout' });
    const webonly = (await admin.post(`/api/v1/projects/${web.id}/flags`, { key: 'webonly' })).body;
    expect((await admin.put(`/api/v1/flags/${webonly.id}/environments/prod/config`, { enabled: true, rolloutPct: 100 })).status).toBe(200);
    const sdkKey = async (projectId: string) =>
      (await admin.post('/api/v1/keys', { kind: 'sdk', projectId, environment: 'prod' })).body.key as string;
    webSdk = httpClient(service.evalUrl, await sdkKey(web.id));
    shopSdk = httpClient(service.evalUrl, await sdkKey(shop.id));
    webEtag = (await webSdk.get('/v1/snapshot')).headers.get('etag');

    await hostCommit((checkout) => {
      const file = path.join(checkout, shopFile);
      const text = readFileSync(file, 'utf8');
      writeFileSync(file, /^id: /m.test(text) ? text.replace(/^id: .*$/m, `id: ${web.id}`) : `id: ${web.id}\n${text}`);
    }, 'shop takes web’s id');
  });
  afterAll(async () => {
    await service.stop();
    await host.stop();
    await rm(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('serves web’s flags to web’s SDK keys, at the snapshot version it had', async () => {
    const snapshot = await webSdk.get('/v1/snapshot');
    expect(Object.keys(snapshot.body.flags)).toEqual(['webonly']);
    expect(snapshot.headers.get('etag')).toBe(webEtag);
    const evaluated = (await webSdk.post('/v1/evaluate', { keys: ['webonly', 'checkout'] })).body;
    expect(evaluated).toMatchObject({ webonly: { value: true }, checkout: { reason: 'flag_not_found' } });
  });

  it('keeps serving shop, held back, to shop’s SDK keys', async () => {
    const evaluated = await shopSdk.post('/v1/evaluate', { keys: ['checkout', 'webonly'] });
    expect(evaluated.status).toBe(200);
    expect(evaluated.body).toMatchObject({ checkout: { value: false }, webonly: { reason: 'flag_not_found' } });
  });

  it('names shop’s project.yaml in /healthz, the file that took the id', async () => {
    const invalid: Json[] = (await admin.get('/healthz')).body.organisations[0].invalidFiles;
    expect(invalid).toEqual([
      expect.objectContaining({
        file: shopFile,
        message: `/id: id "${web.id}" is already used by projects/web/project.yaml; project ids must be unique`,
      }),
    ]);
  });

  it('leaves web’s snapshot version where it was once the commit is reverted on the host', async () => {
    await hostCommit((checkout) => git(checkout, 'revert', '--no-edit', 'HEAD'));
    expect((await admin.get('/healthz')).body.organisations[0].invalidFiles ?? []).toEqual([]);
    const snapshot = await webSdk.get('/v1/snapshot');
    expect(Object.keys(snapshot.body.flags)).toEqual(['webonly']);
    expect(snapshot.headers.get('etag')).toBe(webEtag);
  });
});
