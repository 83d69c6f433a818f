import { randomBytes } from 'node:crypto';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { KeyService } from '../../src/foundations/auth/key-service.js';
import { NotFoundError, UnauthorizedError } from '../../src/foundations/errors/kinds.js';
import { stateIn } from '../helpers/control-state.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { useTempDir } from './temp-dir.js';

const tempDir = useTempDir();
const keysFile = (dataDir: string) => path.join(dataDir, 'state', 'keys.json');
const fixedNow = () => new Date('2025-03-01T12:00:00.000Z');

describe('a created key', () => {
  it('authenticates as its organisation, kind and name', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()), now: fixedNow });
    const created = await keys.createKey('acme', { kind: 'agent', name: 'deploy-bot' });
    expect(created.key).toMatch(/^svc_agt_[0-9A-Za-z]{32}$/);
    expect(created).toMatchObject({
      org: 'acme',
      kind: 'agent',
      name: 'deploy-bot',
      prefix: created.key.slice(0, 16),
      createdAt: '2025-03-01T12:00:00.000Z',
    });
    expect(created).not.toHaveProperty('hash');
    expect(keys.authenticate(created.key)).toEqual({
      org: 'acme',
      kind: 'agent',
      keyId: created.id,
      prefix: created.prefix,
      name: 'deploy-bot',
    });
  });

  it('of kind sdk carries its project and environment into the principal', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const created = await keys.createKey('acme', { kind: 'sdk', projectId: 'p1', environment: 'staging' });
    expect(keys.authenticate(created.key)).toMatchObject({ kind: 'sdk', projectId: 'p1', environment: 'staging' });
  });

  it('is named after its prefix when no name is given', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const created = await keys.createKey('acme', { kind: 'admin' });
    expect(created.name).toBe(created.prefix);
  });

  it('makes its organisation exist', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    expect(keys.hasOrganisation('acme')).toBe(false);
    await keys.createKey('acme', { kind: 'admin' });
    expect(keys.hasOrganisation('acme')).toBe(true);
    expect(keys.organisations().map((o) => o.name)).toEqual(['acme']);
  });

  it('is stored hashed: keys.json never contains the key', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    const created = await keys.createKey('acme', { kind: 'admin' });
    const onDisk = await readFile(keysFile(dataDir), 'utf8');
    expect(onDisk).toContain(created.prefix);
    expect(onDisk).not.toContain(created.key);
    expect(onDisk).not.toContain(created.key.slice(16));
    expect(JSON.parse(onDisk).keys[0].hash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  });

  it('keeps the state files private to the service user', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    await keys.createKey('acme', { kind: 'admin' });
    expect((await stat(keysFile(dataDir))).mode & 0o077).toBe(0);
    expect((await stat(path.join(dataDir, 'state', 'pepper'))).mode & 0o077).toBe(0);
  });
});

describe('authentication', () => {
  it('refuses unknown, malformed and near-miss keys', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const created = await keys.createKey('acme', { kind: 'agent' });
    const lastChar = created.key.at(-1) === 'a' ? 'b' : 'a';
    expect(keys.authenticate(created.key.slice(0, -1) + lastChar)).toBeNull();
    expect(keys.authenticate(created.key.slice(0, -1))).toBeNull();
    expect(keys.authenticate(created.key.replace('svc_agt_', 'svc_adm_'))).toBeNull();
    expect(keys.authenticate('')).toBeNull();
    expect(keys.authenticate(`svc_agt_${'x'.repeat(10_000)}`)).toBeNull();
  });

  it('answers the same principal on repeated calls (served from the cache)', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const created = await keys.createKey('acme', { kind: 'sdk', projectId: 'p1', environment: 'prod' });
    const first = keys.authenticate(created.key);
    expect(keys.authenticate(created.key)).toBe(first);
  });
});

describe('a revoked key', () => {
  it('no longer authenticates, even after it was cached', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const created = await keys.createKey('acme', { kind: 'agent' });
    expect(keys.authenticate(created.key)).not.toBeNull();
    const revoked = await keys.revokeKey('acme', created.id);
    expect(revoked.revokedAt).toBeDefined();
    expect(keys.authenticate(created.key)).toBeNull();
  });

  it('stays revoked after a restart', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    const created = await keys.createKey('acme', { kind: 'agent' });
    await keys.revokeKey('acme', created.id);
    const reopened = await KeyService.open({ state: await stateIn(dataDir) });
    expect(reopened.authenticate(created.key)).toBeNull();
  });

  it('is still listed, marked with revokedAt, and revoking again keeps the first time', async () => {
    let clock = new Date('2025-03-01T12:00:00.000Z');
    const keys = await KeyService.open({ state: await stateIn(await tempDir()), now: () => clock });
    const created = await keys.createKey('acme', { kind: 'agent' });
    clock = new Date('2025-03-02T12:00:00.000Z');
    await keys.revokeKey('acme', created.id);
    clock = new Date('2025-03-03T12:00:00.000Z');
    await keys.revokeKey('acme', created.id);
    expect(keys.listKeys('acme')).toEqual([expect.objectContaining({ id: created.id, revokedAt: '2025-03-02T12:00:00.000Z' })]);
  });

  it('of another organisation is not found, like an unknown id', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const theirs = await keys.createKey('globex', { kind: 'admin' });
    await expect(keys.revokeKey('acme', theirs.id)).rejects.toThrow(NotFoundError);
    await expect(keys.revokeKey('acme', 'no-such-id')).rejects.toThrow(NotFoundError);
    expect(keys.authenticate(theirs.key)).not.toBeNull();
  });
});

describe('listing keys', () => {
  it('shows only the organisation own keys, without hashes or keys', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const a = await keys.createKey('acme', { kind: 'admin', name: 'ops' });
    const s = await keys.createKey('acme', { kind: 'sdk', projectId: 'p1', environment: 'dev' });
    await keys.createKey('globex', { kind: 'admin' });
    const listed = keys.listKeys('acme');
    expect(listed.map((k) => k.id)).toEqual([a.id, s.id]);
    for (const k of listed) {
      expect(k).not.toHaveProperty('hash');
      expect(k).not.toHaveProperty('key');
    }
    expect(listed[1]).toMatchObject({ kind: 'sdk', projectId: 'p1', environment: 'dev' });
  });
});

describe('creating a key with bad input', () => {
  it('refuses an sdk key without project or environment, naming the field', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    await expect(keys.createKey('acme', { kind: 'sdk', environment: 'dev' })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'projectId',
    });
    await expect(keys.createKey('acme', { kind: 'sdk', projectId: 'p1' })).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'environment',
    });
    await expect(keys.createKey('acme', { kind: 'sdk', projectId: 'p1', environment: 'qa' as 'dev' })).rejects.toMatchObject({
      field: 'environment',
    });
  });

  it('refuses an unknown kind, a project on an admin key, and an empty name', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    await expect(keys.createKey('acme', { kind: 'root' as 'admin' })).rejects.toMatchObject({ field: 'kind' });
    await expect(keys.createKey('acme', { kind: 'admin', projectId: 'p1' })).rejects.toMatchObject({ field: 'projectId' });
    await expect(keys.createKey('acme', { kind: 'agent', name: '  ' })).rejects.toMatchObject({ field: 'name' });
    expect(keys.listKeys('acme')).toEqual([]);
  });
});

describe('the control plane and the evaluation API', () => {
  it('refuse an sdk key on the control plane with 401, not 403', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const sdk = await keys.createKey('acme', { kind: 'sdk', projectId: 'p1', environment: 'dev' });
    expect(() => keys.controlPlanePrincipal(sdk.key)).toThrow(UnauthorizedError);
    expect(keys.evaluationPrincipal(sdk.key)).toMatchObject({ kind: 'sdk', projectId: 'p1' });
  });

  it('refuse admin and agent keys on the evaluation API, and no key anywhere', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const agent = await keys.createKey('acme', { kind: 'agent' });
    expect(keys.controlPlanePrincipal(agent.key)).toMatchObject({ kind: 'agent' });
    expect(() => keys.evaluationPrincipal(agent.key)).toThrow(UnauthorizedError);
    expect(() => keys.controlPlanePrincipal(undefined)).toThrow(UnauthorizedError);
    expect(() => keys.evaluationPrincipal(null)).toThrow(UnauthorizedError);
  });
});

describe('persistence', () => {
  it('keeps every key of concurrent creations across a re-open', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    const created = await Promise.all(Array.from({ length: 10 }, (_, i) => keys.createKey('acme', { kind: 'agent', name: `bot-${i}` })));
    const reopened = await KeyService.open({ state: await stateIn(dataDir) });
    expect(reopened.listKeys('acme')).toHaveLength(10);
    for (const c of created) expect(reopened.authenticate(c.key)?.keyId).toBe(c.id);
  });

  it('leaves no temporary files behind and ignores one left by a crash', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    const created = await keys.createKey('acme', { kind: 'admin' });
    expect((await readdir(path.join(dataDir, 'state'))).sort()).toEqual(['keys.json', 'pepper']);
    await writeFile(path.join(dataDir, 'state', '.keys.json.999.dead.tmp'), '{"version":1,"organ');
    const reopened = await KeyService.open({ state: await stateIn(dataDir) });
    expect(reopened.authenticate(created.key)?.keyId).toBe(created.id);
  });

  it('refuses to start when keys exist but the pepper is gone, instead of silently invalidating them', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    await keys.createKey('acme', { kind: 'admin' });
    await writeFile(path.join(dataDir, 'state', 'pepper'), '');
    await expect(KeyService.open({ state: await stateIn(dataDir) })).rejects.toThrow(/pepper is damaged/);
    await rm(path.join(dataDir, 'state', 'pepper'));
    await expect(KeyService.open({ state: await stateIn(dataDir) })).rejects.toThrow(/pepper is missing/);
  });

  it('refuses to start on a pepper the keys were not hashed with (one character changed), leaving keys.json as it is', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    const created = await keys.createKey('acme', { kind: 'admin' });
    const pepperFile = path.join(dataDir, 'state', 'pepper');
    const pepper = await readFile(pepperFile, 'utf8');
    await writeFile(pepperFile, `${pepper.slice(0, 5)}${pepper[5] === 'A' ? 'B' : 'A'}${pepper.slice(6)}`);
    const before = await readFile(keysFile(dataDir), 'utf8');
    await expect(KeyService.open({ state: await stateIn(dataDir) })).rejects.toThrow(
      `${pepperFile} is not the pepper the keys in ${keysFile(dataDir)} were hashed with`,
    );
    expect(await readFile(keysFile(dataDir), 'utf8')).toBe(before);
    expect(JSON.parse(before).pepperCheck).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(before).not.toContain(pepper.trim());
    await writeFile(pepperFile, pepper);
    expect((await KeyService.open({ state: await stateIn(dataDir) })).authenticate(created.key)?.keyId).toBe(created.id);
  });

  it("records the pepper's fingerprint in a keys.json written before it was, and refuses another pepper from then on", async () => {
    const dataDir = await tempDir();
    const created = await (await KeyService.open({ state: await stateIn(dataDir) })).createKey('acme', { kind: 'admin' });
    const { pepperCheck, ...older } = JSON.parse(await readFile(keysFile(dataDir), 'utf8'));
    await writeFile(keysFile(dataDir), JSON.stringify(older));
    expect((await KeyService.open({ state: await stateIn(dataDir) })).authenticate(created.key)?.keyId).toBe(created.id);
    expect(JSON.parse(await readFile(keysFile(dataDir), 'utf8')).pepperCheck).toBe(pepperCheck);
    await writeFile(path.join(dataDir, 'state', 'pepper'), `${randomBytes(32).toString('base64')}\n`);
    await expect(KeyService.open({ state: await stateIn(dataDir) })).rejects.toThrow(/is not the pepper the keys in .* were hashed with/);
  });

  it('reports a damaged keys.json by file and field', async () => {
    const dataDir = await tempDir();
    const keys = await KeyService.open({ state: await stateIn(dataDir) });
    await keys.createKey('acme', { kind: 'admin' });
    const content = JSON.parse(await readFile(keysFile(dataDir), 'utf8'));
    content.keys[0].kind = 'root';
    await writeFile(keysFile(dataDir), JSON.stringify(content));
    await expect(KeyService.open({ state: await stateIn(dataDir) })).rejects.toThrow(
      /keys\.json: keys\[0\]: kind must be admin, agent or sdk/,
    );
  });
});

describe('keys in a state shared by two instances', () => {
  it('a key created through one authenticates on the other, and stops once revoked through it', async () => {
    const dataDir = await tempDir();
    const one = await KeyService.open({ state: await stateIn(dataDir) });
    await one.createKey('acme', { kind: 'admin' });
    const other = await KeyService.open({ state: await stateIn(dataDir) });
    const created = await one.createKey('acme', { kind: 'sdk', projectId: 'p1', environment: 'prod' });
    await vi.waitFor(() => expect(other.authenticate(created.key)?.keyId).toBe(created.id), { timeout: PROMPTLY_MS });
    expect(other.listKeys('acme').map((k) => k.id)).toContain(created.id);
    await one.revokeKey('acme', created.id);
    await vi.waitFor(() => expect(other.authenticate(created.key)).toBeNull(), { timeout: PROMPTLY_MS });
  });
});
