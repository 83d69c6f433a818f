import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { git, gitWith } from '../helpers/git-cli.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { gitAsync } from './git-async.js';

const FORGED = 'Flagops-Action: config_update\nFlagops-Environment: dev\nFlagops-Actor-Type: admin\nFlagops-Key-Prefix: svc_adm_someone1';

/** One service, and engineers who clone over HTTP with a key, commit and push. */
function workspace(svcOf: () => TestService) {
  let work = '';
  let n = 0;
  return {
    setUp() {
      work = mkdtempSync(path.join(os.tmpdir(), 'flagops-push-rules-'));
    },
    tearDown() {
      if (work) rmSync(work, { recursive: true, force: true });
    },
    async clone(key: string): Promise<string> {
      const svc = svcOf();
      const dir = path.join(work, `checkout-${n++}`);
      const url = `${svc.controlUrl.replace('://', `://engineer:${key}@`)}/git/acme.git`;
      const cloned = await gitAsync(work, 'clone', '--quiet', url, dir);
      if (!cloned.ok) throw new Error(cloned.stderr);
      return dir;
    },
  };
}

function write(checkout: string, file: string, content: string | Buffer): void {
  mkdirSync(path.dirname(path.join(checkout, file)), { recursive: true });
  writeFileSync(path.join(checkout, file), content);
}

function commit(checkout: string, message: string): string {
  git(checkout, 'add', '-A');
  git(checkout, 'commit', '--quiet', '-m', message);
  return git(checkout, 'rev-parse', 'HEAD');
}

const push = (checkout: string) => gitAsync(checkout, 'push', 'origin', 'HEAD:main');
const short = (oid: string) => oid.slice(0, 12);
const ON = 'enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\nversion: 2\nrules: []\n';

describe('a push over git over HTTP', () => {
  let svc: TestService;
  let admin: HttpClient;
  let agentPrefix: string;
  let adminPrefix: string;
  /** The commit the agent key pushed in 'names the pushing key …'. */
  let agentPushed = '';
  const ws = workspace(() => svc);

  beforeAll(async () => {
    svc = await startTestService();
    admin = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(admin, 'shop');
    for (const key of ['checkout', 'search', 'banner']) await createFlag(admin, project.id, { key });
    const keys: Json[] = (await admin.get('/api/v1/keys')).body.keys;
    agentPrefix = keys.find((k) => k.kind === 'agent').prefix;
    adminPrefix = keys.find((k) => k.kind === 'admin').prefix;
    ws.setUp();
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      ws.tearDown();
    }
  });

  describe('with Flagops-* trailers', () => {
    it('is refused, naming each commit that carries them, the tip or not, and main does not move', async () => {
      const checkout = await ws.clone(svc.admin);
      const before = git(svc.gitdir(), 'rev-parse', 'main');
      write(checkout, 'projects/shop/environments/prod/checkout.yaml', ON);
      const forged = commit(checkout, `turn checkout on\n\n${FORGED}`);
      write(checkout, 'projects/shop/environments/prod/search.yaml', ON);
      commit(checkout, 'turn search on');
      const pushed = await push(checkout);
      expect(pushed.ok).toBe(false);
      expect(pushed.stderr).toContain(
        `remote: commit ${short(forged)}: its message carries a Flagops-Action trailer; only flagops writes Flagops-* trailers`,
      );
      expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
    });
  });

  describe('in the audit trail', () => {
    it('names the pushing key beside the author the commit claims, as soon as git push returns', async () => {
      const checkout = await ws.clone(svc.agent);
      write(checkout, 'projects/shop/environments/prod/banner.yaml', ON);
      const env = { GIT_AUTHOR_NAME: 'Ada Admin', GIT_AUTHOR_EMAIL: 'ada@example.com' };
      git(checkout, 'add', '-A');
      gitWith(checkout, { env }, 'commit', '--quiet', '-m', 'turn banner on in dev (really)');
      const head = git(checkout, 'rev-parse', 'HEAD');
      agentPushed = head;
      expect((await push(checkout)).ok).toBe(true);

      const { entries } = (await admin.get('/api/v1/audit?limit=5')).body;
      expect(entries[0]).toEqual({
        id: head,
        at: expect.any(String),
        action: 'config_update',
        projectSlug: 'shop',
        flagKey: 'banner',
        environment: 'prod',
        actor: { type: 'git', name: 'Ada Admin' },
        pushedBy: { type: 'agent', keyPrefix: agentPrefix, name: 'bootstrap' },
        message: 'turn banner on in dev (really)',
      });
    });

    it('has every pushed commit when git push returns, without waiting for the repository watcher', async () => {
      for (let round = 0; round < 3; round++) {
        const checkout = await ws.clone(svc.admin);
        write(checkout, 'projects/shop/environments/dev/banner.yaml', ON.replace('version: 2', `version: ${10 + round}`));
        const first = commit(checkout, `banner in dev, round ${round}`);
        write(checkout, 'projects/shop/environments/staging/banner.yaml', ON.replace('version: 2', `version: ${10 + round}`));
        const second = commit(checkout, `banner in staging, round ${round}`);
        expect((await push(checkout)).ok).toBe(true);
        const ids = (await admin.get('/api/v1/audit?limit=2')).body.entries.map((e: Json) => e.id);
        expect(ids).toEqual([second, first]);
      }
    });

    it('keeps the pusher across a restart and a rebuild of the audit index', async () => {
      await svc.service.stop();
      rmSync(path.join(svc.dataDir, 'state', 'audit'), { recursive: true, force: true });
      await svc.restart();
      admin = httpClient(svc.controlUrl, svc.admin);
      const { entries } = (await admin.get('/api/v1/audit?limit=50')).body;
      expect(entries.find((e: Json) => e.id === agentPushed)).toMatchObject({ pushedBy: { type: 'agent', keyPrefix: agentPrefix } });
      // The control plane's own commits show no pusher.
      expect((await admin.get('/api/v1/audit?action=flag_create&limit=1')).body.entries[0]).toMatchObject({ actor: { type: 'admin' } });
      expect((await admin.get('/api/v1/audit?action=flag_create&limit=1')).body.entries[0]).not.toHaveProperty('pushedBy');
    });
  });

  /** Pushes, expects the push refused with main where it was, and returns the `remote:` lines saying why. */
  async function refusal(checkout: string): Promise<string[]> {
    const before = git(svc.gitdir(), 'rev-parse', 'main');
    const pushed = await push(checkout);
    expect(pushed.ok).toBe(false);
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
    return pushed.stderr
      .split('\n')
      .filter((line) => line.includes(': an agent key may not'))
      .map((line) => line.trimEnd());
  }
  const needsAdmin = 'it needs an admin key or an admin session';

  describe('by an agent key', () => {
    it('may not create a project', async () => {
      const checkout = await ws.clone(svc.agent);
      write(checkout, 'projects/blog/project.yaml', 'name: Blog\nslug: blog\n');
      commit(checkout, 'a blog');
      expect(await refusal(checkout)).toEqual([`remote: projects/blog/project.yaml: an agent key may not create projects; ${needsAdmin}`]);
    });

    it('may not archive a flag', async () => {
      const checkout = await ws.clone(svc.agent);
      const flagFile = 'projects/shop/flags/search.yaml';
      write(checkout, flagFile, git(checkout, 'show', `HEAD:${flagFile}`).replace('archivedAt: null', 'archivedAt: 2026-01-02T10:00:00Z'));
      commit(checkout, 'archive search');
      expect(await refusal(checkout)).toEqual([`remote: ${flagFile}: an agent key may not archive flags; ${needsAdmin}`]);
    });

    it('may not delete a flag (its files): one line for the flag, not one per file', async () => {
      const checkout = await ws.clone(svc.agent);
      for (const file of [
        'flags/search.yaml',
        'environments/dev/search.yaml',
        'environments/staging/search.yaml',
        'environments/prod/search.yaml',
      ]) {
        unlinkSync(path.join(checkout, 'projects/shop', file));
      }
      commit(checkout, 'remove search');
      expect(await refusal(checkout)).toEqual([
        `remote: projects/shop/flags/search.yaml: an agent key may not delete flags or their configs; ${needsAdmin}`,
      ]);
    });

    it("may not change a project's name, and is told what it changed", async () => {
      const checkout = await ws.clone(svc.agent);
      const file = 'projects/shop/project.yaml';
      write(checkout, file, git(checkout, 'show', `HEAD:${file}`).replace(/^name: .*$/m, 'name: Shop3'));
      commit(checkout, 'rename shop');
      expect(await refusal(checkout)).toEqual([
        `remote: ${file}: changes name: an agent key may not change a project's settings (name, requireApproval, budgets); ${needsAdmin}`,
      ]);
    });

    it('may not delete a project', async () => {
      const checkout = await ws.clone(svc.agent);
      git(checkout, 'rm', '-r', '--quiet', 'projects/shop');
      commit(checkout, 'remove everything');
      expect(await refusal(checkout)).toEqual([
        `remote: projects/shop/project.yaml: an agent key may not delete projects or their files; ${needsAdmin}`,
      ]);
    });
  });

  describe('that copies a flag', () => {
    /** Copies banner's four files to `key`, the flag file edited by `edit`. */
    function copyBanner(checkout: string, key: string, edit: (text: string) => string): void {
      for (const dir of ['flags', 'environments/dev', 'environments/staging', 'environments/prod']) {
        const text = git(checkout, 'show', `HEAD:projects/shop/${dir}/banner.yaml`);
        write(checkout, `projects/shop/${dir}/${key}.yaml`, `${dir === 'flags' ? edit(text) : text}\n`);
      }
    }
    const issueLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('remote: projects/'));

    it('with its id is refused, naming the copy at its id line, not the flag that had the id', async () => {
      const checkout = await ws.clone(svc.admin);
      // `awning` comes before `banner` by key.
      copyBanner(checkout, 'awning', (text) => text.replace('key: banner', 'key: awning'));
      commit(checkout, 'an awning');
      const before = git(svc.gitdir(), 'rev-parse', 'main');
      const pushed = await push(checkout);
      expect(pushed.ok).toBe(false);
      expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
      const lines = issueLines(pushed.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^remote: projects\/shop\/flags\/awning\.yaml:\d+:\d+: \/id: id "flg_[0-9a-f]+" is already used by projects\/shop\/flags\/banner\.yaml/,
      );
    });

    it('under a key differing only in letter case is refused, naming the copy at its key line', async () => {
      const checkout = await ws.clone(svc.admin);
      copyBanner(checkout, 'Banner', (text) => text.replace('key: banner', 'key: Banner').replace(/^id: .*\n/m, ''));
      commit(checkout, 'a Banner');
      const pushed = await push(checkout);
      expect(pushed.ok).toBe(false);
      const lines = issueLines(pushed.stderr);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^remote: projects\/shop\/flags\/Banner\.yaml:\d+:\d+: \/key: differs from flag "banner" only in letter case/,
      );
    });
  });

  it('that gives a project another project’s id is refused, naming the project that took it', async () => {
    const web = await createProject(admin, 'web');
    const checkout = await ws.clone(svc.admin);
    const shopFile = path.join(checkout, 'projects/shop/project.yaml');
    const text = readFileSync(shopFile, 'utf8');
    // shop comes before web by slug: the default order alone would give it web's id.
    write(
      checkout,
      'projects/shop/project.yaml',
      /^id: /m.test(text) ? text.replace(/^id: .*$/m, `id: ${web.id}`) : `id: ${web.id}\n${text}`,
    );
    commit(checkout, 'shop takes web’s id');
    const before = git(svc.gitdir(), 'rev-parse', 'main');
    const pushed = await push(checkout);
    expect(pushed.ok).toBe(false);
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
    const lines = pushed.stderr.split('\n').filter((line) => line.startsWith('remote: projects/'));
    // Also refused as an id change (ids are stable): the clash is said of the project that took the id.
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`^remote: projects/shop/project\\.yaml:\\d+:\\d+: /id: id "${web.id}" is already used by projects/web/project\\.yaml`),
        ),
      ]),
    );
  });

  describe('that changes an id', () => {
    /**
     * Pushes `file` with its `id:` set to `id` by each key: each push is refused with one line for the file, at
     * its id line, saying `message` (given the old id), and main stays. Returns the old id.
     */
    async function refusedForEveryKey(file: string, id: string, message: (old: string) => string): Promise<string> {
      let old = '';
      for (const key of [svc.admin, svc.agent]) {
        const checkout = await ws.clone(key);
        const text = git(checkout, 'show', `HEAD:${file}`);
        old = /^id: (.*)$/m.exec(text)![1];
        write(checkout, file, text.replace(/^id: .*$/m, `id: ${id}`));
        commit(checkout, 'a new id');
        const before = git(svc.gitdir(), 'rev-parse', 'main');
        const pushed = await push(checkout);
        expect(pushed.ok).toBe(false);
        expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(before);
        const lines = pushed.stderr.split('\n').filter((line) => line.startsWith(`remote: ${file}`));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^remote: [^:]+:\d+:\d+: \/id: /);
        expect(lines[0]).toContain(message(old));
      }
      return old;
    }

    it("of a project is refused for every key, admin too, naming the file and both ids: SDK keys name the project's", async () => {
      const old = await refusedForEveryKey(
        'projects/shop/project.yaml',
        'prj_again',
        (old) =>
          `changes the project's id ${old} → prj_again; ids are stable (SDK keys, keys limited to the project and API paths name ${old}): to change one deliberately, use flagops import --replace --yes`,
      );
      expect((await admin.get(`/api/v1/projects/${old}`)).status).toBe(200);
    });

    it('of a flag is refused for every key, admin too, naming the file and both ids: API paths name the old one', async () => {
      const old = await refusedForEveryKey(
        'projects/shop/flags/checkout.yaml',
        'flg_renamedbyagent',
        (old) =>
          `changes the flag's id ${old} → flg_renamedbyagent; ids are stable (API paths (/api/v1/flags/${old}) name ${old}): to change one deliberately, use flagops import --replace --yes`,
      );
      expect((await admin.get(`/api/v1/flags/${old}`)).status).toBe(200);
    });

    it("by an admin key may change the project's name beside it, which is a setting, not an id", async () => {
      const checkout = await ws.clone(svc.admin);
      const file = 'projects/shop/project.yaml';
      const text = git(checkout, 'show', `HEAD:${file}`);
      write(checkout, file, text.replace(/^name: .*$/m, 'name: Shop Renamed'));
      commit(checkout, 'rename shop');
      const pushed = await push(checkout);
      expect(pushed.ok, pushed.stderr).toBe(true);
      const id = /^id: (.*)$/m.exec(text)![1];
      expect((await admin.get(`/api/v1/projects/${id}`)).body.name).toBe('Shop Renamed');
    });
  });

  it('by an admin key may delete a flag, which the audit trail shows as flag_delete pushed by that key', async () => {
    const checkout = await ws.clone(svc.admin);
    git(
      checkout,
      'rm',
      '--quiet',
      'projects/shop/flags/search.yaml',
      'projects/shop/environments/dev/search.yaml',
      'projects/shop/environments/staging/search.yaml',
      'projects/shop/environments/prod/search.yaml',
    );
    const head = commit(checkout, 'retire search');
    expect((await push(checkout)).ok).toBe(true);
    const { entries } = (await admin.get('/api/v1/audit?limit=1')).body;
    expect(entries[0]).toMatchObject({
      id: head,
      action: 'flag_delete',
      flagKey: 'search',
      pushedBy: { type: 'admin', keyPrefix: adminPrefix },
    });
  });

  it('is refused when a file is not UTF-8, naming the file, as the API refuses such a body', async () => {
    const checkout = await ws.clone(svc.admin);
    const file = 'projects/shop/flags/banner.yaml';
    const text = git(checkout, 'show', `HEAD:${file}`).replace(/^name: .*\n/m, '');
    write(checkout, file, Buffer.concat([Buffer.from(`${text.trimEnd()}\nname: "`), Buffer.from([0xff, 0xfe]), Buffer.from('"\n')]));
    commit(checkout, 'a name in latin-1');
    const main = git(svc.gitdir(), 'rev-parse', 'main');
    const pushed = await push(checkout);
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toMatch(new RegExp(`remote: ${file}:\\d+:\\d+: is not valid UTF-8 text`));
    expect(git(svc.gitdir(), 'rev-parse', 'main')).toBe(main);
  });

  it('holds only files under projects/ (and a README.md), none over 1 MiB, no symbolic link, no submodule', async () => {
    const checkout = await ws.clone(svc.admin);
    write(checkout, 'scripts/deploy.sh', 'echo hi\n');
    const outside = commit(checkout, 'a script');
    write(checkout, 'projects/shop/assets/big.bin', randomBytes(2 * 1024 * 1024));
    const big = commit(checkout, 'a big file');
    symlinkSync('../project.yaml', path.join(checkout, 'projects/shop/flags/alias'));
    const link = commit(checkout, 'a link');
    git(checkout, 'update-index', '--add', '--cacheinfo', `160000,${outside},projects/shop/vendor`);
    git(checkout, 'commit', '--quiet', '-m', 'a submodule');
    const gitlink = git(checkout, 'rev-parse', 'HEAD');
    const pushed = await push(checkout);
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain(
      `remote: scripts/deploy.sh (commit ${short(outside)}): only files under projects/ (and a README.md at the root) may be pushed`,
    );
    expect(pushed.stderr).toContain(
      `remote: projects/shop/assets/big.bin (commit ${short(big)}): 2.0 MiB is over the limit of 1 MiB per file`,
    );
    expect(pushed.stderr).toContain(`remote: projects/shop/flags/alias (commit ${short(link)}): symbolic links are not allowed`);
    expect(pushed.stderr).toContain(`remote: projects/shop/vendor (commit ${short(gitlink)}): submodules are not allowed`);

    const readme = await ws.clone(svc.admin);
    write(readme, 'README.md', '# Our flags\n');
    commit(readme, 'a readme');
    expect((await push(readme)).ok).toBe(true);
  });

  it('refuses paths differing only in letter case, files or folders, and a .YAML or .Yml out of the layout', async () => {
    // On a case-insensitive checkout checkout.YAML is checkout.yaml: the agent's prod config would ride on the next commit -a.
    const clash = await ws.clone(svc.agent);
    write(clash, 'projects/shop/environments/prod/checkout.YAML', ON);
    commit(clash, 'checkout on in prod, in other letters');
    const refused = await push(clash);
    expect(refused.ok).toBe(false);
    expect(refused.stderr).toContain(
      'remote: projects/shop/environments/prod/checkout.YAML: differs from projects/shop/environments/prod/checkout.yaml only in letter case',
    );
    expect(refused.stderr).toContain('remote: projects/shop/environments/prod/checkout.YAML: is not part of the repository layout');

    const folder = await ws.clone(svc.agent);
    write(folder, 'projects/shop/Environments/prod/checkout.txt', 'enabled: true\n');
    commit(folder, 'a folder in other letters');
    const folderRefused = await push(folder);
    expect(folderRefused.ok).toBe(false);
    expect(folderRefused.stderr).toContain(
      'remote: projects/shop/Environments: differs from projects/shop/environments only in letter case',
    );

    const extension = await ws.clone(svc.agent);
    write(extension, 'projects/shop/flags/nf4.Yml', 'key: nf4\n');
    commit(extension, 'a flag file with another extension');
    const extensionRefused = await push(extension);
    expect(extensionRefused.ok).toBe(false);
    expect(extensionRefused.stderr).toContain('remote: projects/shop/flags/nf4.Yml: is not part of the repository layout');
  });
});

describe('a push past the plan’s project limit', () => {
  let svc: TestService;
  const ws = workspace(() => svc);
  beforeAll(async () => {
    svc = await startTestService({ planProjectLimit: 1 });
    await createProject(httpClient(svc.controlUrl, svc.admin), 'shop');
    ws.setUp();
  });
  afterAll(async () => {
    try {
      await svc?.stop();
    } finally {
      ws.tearDown();
    }
  });

  it('is refused, even for an admin key, naming the project it would add', async () => {
    const checkout = await ws.clone(svc.admin);
    write(checkout, 'projects/blog/project.yaml', 'name: Blog\nslug: blog\n');
    commit(checkout, 'a blog');
    const pushed = await push(checkout);
    expect(pushed.ok).toBe(false);
    expect(pushed.stderr).toContain('remote: projects/blog/project.yaml: the plan allows at most 1 projects; this push would make 2');
  });
});

/** A request with the path exactly as given: fetch() would resolve `..` before sending it. */
function rawRequest(base: string, pathname: string, key: string, options: { method?: string; body?: 'hang' } = {}) {
  const url = new URL(base);
  let request!: http.ClientRequest;
  const response = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: pathname,
        method: options.method ?? 'GET',
        headers: {
          authorization: `Basic ${Buffer.from(`x:${key}`).toString('base64')}`,
          ...(options.body ? { 'content-type': 'application/x-git-receive-pack-request', 'transfer-encoding': 'chunked' } : {}),
        },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    request.on('error', reject);
  });
  if (options.body === 'hang') request.write('0000'.slice(0, 2));
  else request.end();
  return { response, request };
}

describe('git over HTTP paths and load', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ orgs: ['acme', 'globex'], gitProcesses: { max: 1, queue: 0 } });
  });
  afterAll(() => svc.stop());

  it('answers 400 to a path that leaves the repository or is not a smart-HTTP endpoint, and runs no git for it', async () => {
    for (const bad of [
      '/git/acme.git/../globex.git/info/refs?service=git-upload-pack',
      '/git/acme.git/%2e%2e/globex.git/info/refs?service=git-upload-pack',
      '/git/acme.git/objects/info/packs',
      '/git/acme.git/HEAD',
      '/git/acme.git/info/refs',
    ]) {
      const { response } = rawRequest(svc.controlUrl, bad, svc.admin);
      const res = await response;
      expect(res.status, bad).toBe(400);
      expect(JSON.parse(res.body).error.code, bad).toBe('invalid_input');
    }
  });

  it('answers 503 with Retry-After when every git process is taken, and serves again once one is free', async () => {
    const hanging = rawRequest(svc.controlUrl, '/git/acme.git/git-receive-pack', svc.admin, { method: 'POST', body: 'hang' });
    hanging.response.catch(() => {});
    let turnedAway: { status: number; headers: http.IncomingHttpHeaders; body: string } | undefined;
    for (let i = 0; i < 100 && !turnedAway; i++) {
      const res = await rawRequest(svc.controlUrl, '/git/acme.git/info/refs?service=git-upload-pack', svc.admin).response;
      if (res.status === 503) turnedAway = res;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(turnedAway?.headers['retry-after']).toBe('5');
    expect(JSON.parse(turnedAway!.body).error.code).toBe('unavailable');
    hanging.request.destroy();
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await rawRequest(svc.controlUrl, '/git/acme.git/info/refs?service=git-upload-pack', svc.admin).response).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(200);
  });
});
