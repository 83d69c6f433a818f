import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

const CONFIG = 'projects/shop/environments/dev/checkout.yaml';

async function until(what: string, done: () => boolean): Promise<void> {
  for (let tries = 0; !done(); tries++) {
    if (tries > 600) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// docs/flags-repository.md, "Clone and push": a refused push says why in a `remote:` line, and an API change that
// moves main while a push is being checked is one reason.
describe('a push checked while an API change moves main', () => {
  let svc: TestService;
  let admin: HttpClient;
  let flag: Json;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-moved-'));
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    flag = await createFlag(admin, (await createProject(admin, 'shop')).id, { key: 'checkout' });
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      if (work) rmSync(work, { recursive: true, force: true });
    }
  });

  it('is refused with a flagops line saying to rebase, the API change is kept, and the push is not recorded', async () => {
    const checkout = path.join(work, 'checkout');
    const cloned = await gitAsync(
      work,
      'clone',
      '--quiet',
      `${svc.controlUrl.replace('://', `://engineer:${svc.admin}@`)}/git/acme.git`,
      checkout,
    );
    expect(cloned.ok, cloned.stderr).toBe(true);
    const text = readFileSync(path.join(checkout, CONFIG), 'utf8');
    writeFileSync(path.join(checkout, CONFIG), text.replace(/^rolloutPct: .*$/m, 'rolloutPct: 30'));
    git(checkout, 'commit', '--quiet', '-am', 'checkout at 30 % in dev');
    const pushedCommit = git(checkout, 'rev-parse', 'HEAD');

    // The service's hook, held at its start until the API change is made: the race, every time. The service
    // writes it as a push first asks for main (a dry run asks, and sends nothing).
    const asked = await gitAsync(checkout, 'push', '--dry-run', 'origin', 'HEAD:main');
    expect(asked.ok, asked.stderr).toBe(true);
    const hook = path.join(svc.gitdir(), 'hooks', 'pre-receive');
    const started = path.join(work, 'hook-started');
    const go = path.join(work, 'hook-go');
    const script = readFileSync(hook, 'utf8');
    writeFileSync(hook, script.replace('#!/bin/sh\n', `#!/bin/sh\ntouch '${started}'\nwhile [ ! -f '${go}' ]; do sleep 0.05; done\n`));

    const pushing = gitAsync(checkout, 'push', 'origin', 'HEAD:main');
    await until('the hook runs', () => existsSync(started));
    const updated = await admin.put(`/api/v1/flags/${flag.id}/environments/dev/config`, { enabled: true, rolloutPct: 50 });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const apiCommit = git(svc.gitdir(), 'rev-parse', 'main');
    writeFileSync(go, '');
    const pushed = await pushing;

    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      'remote: refs/heads/main: main moved while the push was checked (an API change or another push); nothing was changed: fetch, rebase on main and push again',
    );
    expect(pushed.stderr).not.toContain('cannot lock ref');
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(apiCommit);
    expect(git(svc.gitdir(), 'show', `main:${CONFIG}`)).toMatch(/^rolloutPct: 50$/m);
    const pushLog = path.join(svc.dataDir, 'state', 'pushes', 'acme.jsonl');
    expect(existsSync(pushLog) ? readFileSync(pushLog, 'utf8') : '').not.toContain(pushedCommit);
  });
});
