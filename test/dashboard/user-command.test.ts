import { readdir } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createUserCommand } from '../../src/apps/cli/commands/user.js';
import { run } from '../../src/apps/cli/run.js';
import { firstLine, readNewPassword } from '../../src/apps/dashboard/users/read-password.js';
import { UserService } from '../../src/apps/dashboard/users/user-service.js';
import { KeyService } from '../../src/foundations/auth/key-service.js';
import { stateIn } from '../helpers/control-state.js';
import { useDataDir } from './helpers/temp-dir.js';

async function userAdd(args: string[], password: string, env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const command = createUserCommand(async () => password);
  const code = await command
    .run(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: '/', env })
    .catch((err: Error) => {
      stderr += err.message;
      return -1;
    });
  return { code, stdout, stderr };
}

describe('flagops user add', () => {
  const dataDir = useDataDir();

  it('is listed among the commands', async () => {
    let out = '';
    await run(['--help'], { stdout: (t) => (out += t), stderr: () => undefined, cwd: '/', env: {} });
    expect(out).toMatch(/ user +add a dashboard user/);
  });

  it('adds a user to the only organisation of the data dir, who can then sign in', async () => {
    const dir = await dataDir();
    await (await KeyService.open({ state: await stateIn(dir) })).createKey('acme', { kind: 'admin' });
    const result = await userAdd(['add', '--data-dir', dir, '--username', 'alice', '--name', 'Alice Martin'], 'alice-password-1');
    expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining('created user alice (Alice Martin) in organisation acme') });
    const users = await UserService.open({ state: await stateIn(dir) });
    expect(await users.verify('alice', 'alice-password-1')).toMatchObject({ org: 'acme', name: 'Alice Martin' });
  });

  it('gives the user the role of --role (default admin), which their sessions get; a wrong role is refused before any password', async () => {
    const dir = await dataDir();
    await (await KeyService.open({ state: await stateIn(dir) })).createKey('acme', { kind: 'admin' });
    const result = await userAdd(
      ['add', '--data-dir', dir, '--username', 'sam', '--name', 'Sam', '--role', 'editor@shop,web'],
      'sam-password-12',
    );
    expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining('with role editor@shop,web') });
    const plain = await userAdd(['add', '--data-dir', dir, '--username', 'ann', '--name', 'Ann'], 'ann-password-12');
    expect(plain.stdout).toContain('with role admin');
    const users = await UserService.open({ state: await stateIn(dir) });
    expect(await users.verify('sam', 'sam-password-12')).toMatchObject({ role: 'editor@shop,web' });
    expect((await users.verify('ann', 'ann-password-12'))?.role).toBeUndefined();
    let asked = false;
    const command = createUserCommand(async () => {
      asked = true;
      return 'x-password-12';
    });
    const wrong = await command
      .run(['add', '--data-dir', dir, '--username', 'x', '--name', 'X', '--role', 'owner'], {
        stdout: () => undefined,
        stderr: () => undefined,
        cwd: '/',
        env: {},
      })
      .catch((err: Error) => err.message);
    expect(wrong).toContain('--role: "owner" names no role (viewer, editor, admin)');
    expect(asked).toBe(false);
  });

  it('reads the data dir from FLAGOPS_DATA_DIR and needs --org when there are several organisations', async () => {
    const dir = await dataDir();
    const keys = await KeyService.open({ state: await stateIn(dir) });
    await keys.createKey('acme', { kind: 'admin' });
    await keys.createKey('globex', { kind: 'admin' });
    const args = ['add', '--username', 'gary', '--name', 'Gary'];
    await expect(userAdd(args, 'gary-password-1', { FLAGOPS_DATA_DIR: dir })).resolves.toMatchObject({
      code: -1,
      stderr: expect.stringContaining('choose one with --org'),
    });
    await expect(userAdd([...args, '--org', 'initech'], 'gary-password-1', { FLAGOPS_DATA_DIR: dir })).resolves.toMatchObject({
      stderr: expect.stringContaining('does not exist'),
    });
    await expect(userAdd([...args, '--org', 'globex'], 'gary-password-1', { FLAGOPS_DATA_DIR: dir })).resolves.toMatchObject({ code: 0 });
  });

  it('refuses a data dir without organisations, a short password and a taken username, creating nothing', async () => {
    const empty = await dataDir();
    expect((await userAdd(['add', '--data-dir', empty, '--username', 'a', '--name', 'A'], 'long-enough-pw')).stderr).toMatch(
      /holds no organisation yet/,
    );
    const dir = await dataDir();
    await (await KeyService.open({ state: await stateIn(dir) })).createKey('acme', { kind: 'admin' });
    const base = ['add', '--data-dir', dir, '--username', 'alice', '--name', 'Alice'];
    expect((await userAdd(base, 'short')).stderr).toMatch(/password: must have at least 10 characters/);
    expect((await userAdd(base, 'alice-password-1')).code).toBe(0);
    expect((await userAdd(base, 'other-password-1')).stderr).toMatch(/taken/);
    expect(await (await UserService.open({ state: await stateIn(dir) })).verify('alice', 'alice-password-1')).not.toBeNull();
  });

  it('leaves a directory without organisations as it was when it refuses it', async () => {
    const empty = await dataDir();
    expect((await userAdd(['add', '--data-dir', empty, '--username', 'a', '--name', 'A'], 'long-enough-pw')).code).not.toBe(0);
    expect(await readdir(empty)).toEqual([]);
  });

  it('exits 2 with the help on a command-line mistake', async () => {
    let err = '';
    const code = await run(['user', 'add', '--name', 'No Username'], {
      stdout: () => undefined,
      stderr: (t) => (err += t),
      cwd: '/',
      env: {},
    });
    expect(code).toBe(2);
    expect(err).toContain('--username is required');
    expect(err).toContain('Usage: flagops user add');
  });

  it('takes the first line of a piped stdin as the password', async () => {
    expect(await firstLine(Readable.from(['s3cret-pass', 'word\r\nignored\n']))).toBe('s3cret-password');
    expect(await firstLine(Readable.from([Buffer.from('no newline at all')]))).toBe('no newline at all');
  });

  it('on a terminal asks twice without echo (backspace works) and refuses two different passwords', async () => {
    const terminal = () => {
      const input = Object.assign(new PassThrough(), { isTTY: true, raw: [] as boolean[] });
      Object.assign(input, { setRawMode: (on: boolean) => input.raw.push(on) });
      const output = new PassThrough();
      let shown = '';
      output.on('data', (d: Buffer) => (shown += d.toString()));
      return { input, output, shown: () => shown };
    };
    const ok = terminal();
    const typed = readNewPassword(ok.input, ok.output);
    ok.input.write('long-passwordX\x7f\r');
    await new Promise((r) => setImmediate(r));
    ok.input.write('long-password\n');
    expect(await typed).toBe('long-password');
    expect(ok.shown()).toBe('Password: \nRepeat the password: \n');
    expect(ok.input.raw).toEqual([true, false, true, false]);

    const differ = terminal();
    const refused = readNewPassword(differ.input, differ.output);
    differ.input.write('first-password\r');
    await new Promise((r) => setImmediate(r));
    differ.input.write('other-password\r');
    await expect(refused).rejects.toThrow('the two passwords differ');
  });
});
