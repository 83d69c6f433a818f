import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

const ON_IN_PROD = 'enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\nversion: 2\nrules: []\n';

describe('the flags repository over git smart HTTP (/git/<org>.git)', () => {
  let svc: TestService;
  let admin: HttpClient;
  let evaluation: HttpClient;
  let project: Json;
  let work: string;
  const remote = (key: string, org = 'acme') => `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/${org}.git`;
  const evaluate = async (key: string) => (await evaluation.post('/v1/evaluate', { key })).body[key];

  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'] });
    admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop');
    const sdk = await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' });
    evaluation = httpClient(svc.evalUrl, sdk.body.key);
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-git-http-'));
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('clone, edit, commit, push with an admin key: served within 2 s and in the audit log as the git author', async () => {
    const flag = await createFlag(admin, project.id, { key: 'pushed-over-http' });
    const checkout = path.join(work, 'admin');
    const cloned = await gitAsync(work, 'clone', '--quiet', remote(svc.admin), checkout);
    expect(cloned.stderr).toBe('');
    expect(cloned.ok).toBe(true);
    writeFileSync(path.join(checkout, 'projects/shop/environments/prod', `${flag.key}.yaml`), ON_IN_PROD);
    git(checkout, 'commit', '--quiet', '-am', 'turn pushed-over-http on in prod');
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(true);
    const at = Date.now();
    let result = await evaluate(flag.key);
    while (result.reason !== 'default' && Date.now() - at < 2_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      result = await evaluate(flag.key);
    }
    expect(result).toMatchObject({ value: true, reason: 'default' });
    const head = git(checkout, 'rev-parse', 'HEAD');
    let entry: Json;
    while (!entry && Date.now() - at < 5_000) {
      entry = (await admin.get('/api/v1/audit?limit=10')).body.entries.find((e: Json) => e.id === head);
      if (!entry) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(entry).toMatchObject({
      action: 'config_update',
      flagKey: flag.key,
      environment: 'prod',
      actor: { type: 'git', name: 'Erin Engineer' },
    });
  });

  it('an agent key may fetch and push too', async () => {
    const flag = await createFlag(admin, project.id, { key: 'pushed-by-agent' });
    const checkout = path.join(work, 'agent');
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.agent), checkout)).ok).toBe(true);
    writeFileSync(path.join(checkout, 'projects/shop/environments/dev', `${flag.key}.yaml`), ON_IN_PROD);
    git(checkout, 'commit', '--quiet', '-am', 'turn pushed-by-agent on in dev');
    expect((await gitAsync(checkout, 'push', 'origin', 'HEAD:main')).ok).toBe(true);
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(git(checkout, 'rev-parse', 'HEAD'));
  });

  it('takes the key as a bearer token too (http.extraHeader), so a clone keeps no key in its .git/config', async () => {
    const bearer = ['-c', `http.extraHeader=Authorization: Bearer ${svc.admin}`];
    const checkout = path.join(work, 'bearer');
    const url = `${svc.controlUrl}/git/acme.git`;
    const cloned = await gitAsync(work, ...bearer, 'clone', '--quiet', url, checkout);
    expect(cloned.stderr).toBe('');
    expect(cloned.ok).toBe(true);
    expect(readFileSync(path.join(checkout, '.git/config'), 'utf8')).not.toContain(svc.admin);
    writeFileSync(
      path.join(checkout, 'projects/shop/project.yaml'),
      git(checkout, 'show', 'HEAD:projects/shop/project.yaml').replace(/name: .*/, 'name: Shop over a bearer token'),
    );
    git(checkout, 'commit', '--quiet', '-am', 'rename the shop, pushed with a bearer token');
    expect((await gitAsync(checkout, ...bearer, 'push', 'origin', 'HEAD:main')).ok).toBe(true);
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(git(checkout, 'rev-parse', 'HEAD'));
    // Without it, git is asked for credentials and has none to give.
    expect((await gitAsync(checkout, 'fetch', 'origin')).ok).toBe(false);
    // An SDK key is not enough, whichever way it comes.
    const sdk = (await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'prod' })).body.key;
    const refused = await fetch(`${url}/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${sdk}` } });
    expect(refused.status).toBe(401);
  });

  it('refuses an invalid push with the validator’s file:line:column message, and main does not move', async () => {
    const checkout = path.join(work, 'invalid');
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.admin), checkout)).ok).toBe(true);
    const before = git(svc.gitdir(), 'rev-parse', 'main');
    writeFileSync(
      path.join(checkout, 'projects/shop/environments/prod/pushed-over-http.yaml'),
      ON_IN_PROD.replace('rolloutPct: 100', 'rolloutPct: 250'),
    );
    git(checkout, 'commit', '--quiet', '-am', 'an impossible rollout');
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain('pre-receive hook declined');
    expect(pushed.stderr).toMatch(/projects\/shop\/environments\/prod\/pushed-over-http\.yaml:2:\d+: .*rolloutPct/);
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
    expect((await evaluate('pushed-over-http')).reason).toBe('default');
  });

  it('refuses a non-fast-forward push and the deletion of main', async () => {
    const checkout = path.join(work, 'rewrite');
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.admin), checkout)).ok).toBe(true);
    const before = git(svc.gitdir(), 'rev-parse', 'main');
    git(checkout, 'commit', '--quiet', '--amend', '-m', 'rewritten history');
    expect((await gitAsync(checkout, 'push', '--force', 'origin', 'HEAD:main')).ok).toBe(false);
    expect((await gitAsync(checkout, 'push', 'origin', ':main')).ok).toBe(false);
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
  });

  it("refuses main merged into a branch and pushed as main, which would take main's head off the audit trail", async () => {
    const flag = await createFlag(admin, project.id, { key: 'merged-around' });
    const checkout = path.join(work, 'merge-around');
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.admin), checkout)).ok).toBe(true);
    git(checkout, 'config', 'user.name', 'Erin Engineer');
    git(checkout, 'config', 'user.email', 'erin@example.com');
    writeFileSync(path.join(checkout, 'projects/shop/environments/dev/merged-around.yaml'), ON_IN_PROD);
    git(checkout, 'commit', '--quiet', '-am', 'on in dev');
    // Meanwhile a kill through the API moves main.
    expect((await admin.post(`/api/v1/flags/${flag.id}/environments/prod/kill`, {})).status).toBe(200);
    const killed = git(svc.gitdir(), 'rev-parse', 'main');
    expect((await gitAsync(checkout, 'pull', '--quiet', '--no-rebase', '--no-edit', 'origin', 'main')).ok).toBe(true);
    const pushed = await gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      `refs/heads/main: main's head ${killed.slice(0, 7)} would leave the first-parent line the audit trail follows`,
    );
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(killed);
    // As the message says: rebased on main, it goes in, and the kill stays in the trail as the API made it.
    git(checkout, 'reset', '--quiet', '--hard', 'HEAD^1');
    expect((await gitAsync(checkout, 'pull', '--quiet', '--rebase', 'origin', 'main')).ok).toBe(true);
    expect((await gitAsync(checkout, 'push', 'origin', 'HEAD:main')).ok).toBe(true);
    const entries = (await admin.get('/api/v1/audit?limit=5')).body.entries as Json[];
    expect(entries.find((e) => e.id === killed)).toMatchObject({ action: 'kill', actor: { type: 'admin' } });
  });

  it('answers a wrong key with 401 and a Basic challenge, so git asks for credentials', async () => {
    const res = await fetch(`${svc.controlUrl}/git/acme.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from('x:svc_adm_not-a-real-key').toString('base64')}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="flagops"/);
    const none = await fetch(`${svc.controlUrl}/git/acme.git/info/refs?service=git-upload-pack`);
    expect(none.status).toBe(401);
    const cloned = await gitAsync(work, 'clone', '--quiet', remote('svc_adm_wrong'), path.join(work, 'wrong'));
    expect(cloned.ok).toBe(false);
    expect(cloned.stderr).toMatch(/Authentication failed|401/);
  });

  it('answers another organisation’s repository with 404', async () => {
    const res = await fetch(`${svc.controlUrl}/git/globex.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${svc.admin}`).toString('base64')}` },
    });
    expect(res.status).toBe(404);
    expect((await gitAsync(work, 'clone', '--quiet', remote(svc.orgs.globex.admin, 'globex'), path.join(work, 'globex'))).ok).toBe(true);
  });

  it('inflates a gzip-encoded request body, as git sends for large fetch negotiations', async () => {
    const head = git(svc.gitdir(), 'rev-parse', 'main');
    const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;
    const body = gzipSync(Buffer.from(`${pkt(`want ${head}\n`)}0000${pkt('done\n')}`));
    const res = await fetch(`${svc.controlUrl}/git/acme.git/git-upload-pack`, {
      method: 'POST',
      body,
      headers: {
        authorization: `Basic ${Buffer.from(`x:${svc.admin}`).toString('base64')}`,
        'content-type': 'application/x-git-upload-pack-request',
        'content-encoding': 'gzip',
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-result');
    expect(Buffer.from(await res.arrayBuffer()).includes('PACK')).toBe(true);
  });

  it('does not accept an sdk key', async () => {
    const sdk = await admin.post('/api/v1/keys', { kind: 'sdk', projectId: project.id, environment: 'dev' });
    const res = await fetch(`${svc.controlUrl}/git/acme.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: `Basic ${Buffer.from(`x:${sdk.body.key}`).toString('base64')}` },
    });
    expect(res.status).toBe(401);
  });
});
