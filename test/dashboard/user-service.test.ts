import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { UserService } from '../../src/apps/dashboard/users/user-service.js';
import { ConflictError, InvalidInputError, NotFoundError } from '../../src/foundations/errors/kinds.js';
import { stateIn } from '../helpers/control-state.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { CHEAP_COST, useDataDir } from './helpers/temp-dir.js';

const alice = { username: 'alice', name: 'Alice Martin', password: 'alice-password-1' };

describe('the user store (state/users.json)', () => {
  const dataDir = useDataDir();

  it('creates a user whose password then verifies, and keeps only its hash on disk (mode 0600)', async () => {
    const dir = await dataDir();
    const users = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    const created = await users.create('acme', alice);
    expect(created).toMatchObject({ org: 'acme', username: 'alice', name: 'Alice Martin' });
    expect(created).not.toHaveProperty('passwordHash');
    expect(await users.verify('alice', 'alice-password-1')).toEqual(created);
    expect(await users.verify('alice', 'wrong-password-1')).toBeNull();
    const file = path.join(dir, 'state', 'users.json');
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain('alice-password-1');
    expect(text).toMatch(/"passwordHash": "scrypt\$/);
    const { stat } = await import('node:fs/promises');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('signs in regardless of the username letter case, and refuses a second Alice in any organisation', async () => {
    const users = await UserService.open({ state: await stateIn(await dataDir()), cost: CHEAP_COST });
    await users.create('acme', alice);
    expect(await users.verify('ALICE', 'alice-password-1')).toMatchObject({ username: 'alice' });
    await expect(users.create('globex', { ...alice, username: 'Alice' })).rejects.toBeInstanceOf(ConflictError);
  });

  it('says nothing about unknown usernames but null', async () => {
    const users = await UserService.open({ state: await stateIn(await dataDir()), cost: CHEAP_COST });
    expect(await users.verify('nobody', 'some-password-1')).toBeNull();
  });

  it('refuses bad input naming the field', async () => {
    const users = await UserService.open({ state: await stateIn(await dataDir()), cost: CHEAP_COST });
    const cases: Array<[unknown, string]> = [
      [{ ...alice, username: 'a b' }, 'username'],
      [{ ...alice, username: '' }, 'username'],
      [{ ...alice, name: '  ' }, 'name'],
      [{ ...alice, name: 'Line\nbreak' }, 'name'],
      [{ ...alice, password: 'short' }, 'password'],
      [{ ...alice, password: 42 }, 'password'],
      // role is a field now (docs/credentials.md, "Roles"); an unknown one is still refused, as is a role that is none.
      [{ ...alice, isAdmin: true }, 'isAdmin'],
      [{ ...alice, role: 'owner' }, 'role'],
      [{ ...alice, role: 'editor@Shop Web' }, 'role'],
      [{ ...alice, role: 7 }, 'role'],
    ];
    for (const [input, field] of cases) {
      const err = await users.create('acme', input).catch((e: unknown) => e);
      expect(err, JSON.stringify(input)).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidInputError).field).toBe(field);
    }
  });

  it('lists and removes users of one organisation only', async () => {
    const users = await UserService.open({ state: await stateIn(await dataDir()), cost: CHEAP_COST });
    const a = await users.create('acme', alice);
    const g = await users.create('globex', { username: 'gary', name: 'Gary', password: 'gary-password-1' });
    expect((await users.list('acme')).map((u) => u.username)).toEqual(['alice']);
    await expect(users.remove('acme', g.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await users.remove('acme', a.id)).toMatchObject({ id: a.id });
    expect(await users.verify('alice', 'alice-password-1')).toBeNull();
    expect(users.byId(a.id)).toBeUndefined();
  });

  it('sees a user that another process (flagops user add) wrote to the file meanwhile', async () => {
    const dir = await dataDir();
    const server = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    const cli = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    await cli.create('acme', alice);
    expect(await server.verify('alice', 'alice-password-1')).toMatchObject({ username: 'alice' });
    // and the server's next write keeps the CLI's user
    await server.create('acme', { username: 'bob', name: 'Bob', password: 'bob-password-12' });
    expect((await cli.list('acme')).map((u) => u.username)).toEqual(['alice', 'bob']);
  });

  it('loses no user when the service and flagops user add write at the same moment', async () => {
    const dir = await dataDir();
    const server = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    const cli = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    const names = Array.from({ length: 8 }, (_, i) => `user-${i}`);
    await Promise.all(
      names.map((username, i) => (i % 2 ? server : cli).create('acme', { username, name: username, password: `${username}-password` })),
    );
    expect((await server.list('acme')).map((u) => u.username).sort()).toEqual(names);
  });

  it('takes over the lock of a flagops user add that died holding it', async () => {
    const dir = await dataDir();
    const users = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(path.join(dir, 'state', 'users.json.lock'), String(dead));
    await users.create('acme', alice);
    expect((await users.list('acme')).map((u) => u.username)).toEqual(['alice']);
    await expect(readFile(path.join(dir, 'state', 'users.json.lock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses to start on a damaged file rather than losing its users', async () => {
    const dir = await dataDir();
    const users = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    await users.create('acme', alice);
    await writeFile(path.join(dir, 'state', 'users.json'), '{"version":1,"users":[{"id":"x"}]}');
    await expect(UserService.open({ state: await stateIn(dir) })).rejects.toThrow(/users\[0\]/);
  });
});

describe('users in a state shared by two instances', () => {
  const dataDir = useDataDir();

  it("a user added through one is known to the other's sessions at once, and gone once removed through it", async () => {
    const dir = await dataDir();
    const one = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    const other = await UserService.open({ state: await stateIn(dir), cost: CHEAP_COST });
    const created = await one.create('acme', alice);
    await vi.waitFor(() => expect(other.byId(created.id)).toEqual(created), { timeout: PROMPTLY_MS });
    expect(other.hasUsername('ALICE')).toBe(true);
    await one.remove('acme', created.id);
    await vi.waitFor(() => expect(other.byId(created.id)).toBeUndefined(), { timeout: PROMPTLY_MS });
  });
});
