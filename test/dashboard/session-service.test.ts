import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { newSessionToken } from '../../src/apps/dashboard/sessions/session-cookie.js';
import { sessionOfToken } from '../../src/apps/dashboard/sessions/session-routes.js';
import { SessionService } from '../../src/apps/dashboard/sessions/session-service.js';
import type { UserService } from '../../src/apps/dashboard/users/user-service.js';
import { StateFaultError } from '../../src/foundations/errors/kinds.js';
import { createLogger, silentLogger } from '../../src/foundations/log/logger.js';
import type { SessionStore } from '../../src/foundations/state/index.js';
import { stateIn } from '../helpers/control-state.js';
import { PROMPTLY_MS } from '../helpers/deadlines.js';
import { manualClock, useDataDir } from './helpers/temp-dir.js';

const HOUR = 3_600_000;
const user = { id: 'usr_1', org: 'acme' };

/** Every service a test opened: activity queues saves nobody waits for, so each is closed before its directory goes. */
const opened: SessionService[] = [];
async function closeOpened(): Promise<void> {
  await Promise.all(opened.splice(0).map((sessions) => sessions.close()));
}

async function open(dataDir: string, clock = manualClock()) {
  const sessions = await SessionService.open({
    state: await stateIn(dataDir),
    logger: silentLogger,
    now: clock.now,
    idleMs: 2 * HOUR,
    absoluteMs: 12 * HOUR,
  });
  opened.push(sessions);
  return sessions;
}

describe('dashboard sessions (state/sessions.json)', () => {
  const dataDir = useDataDir(closeOpened);

  it('resolves the token it issued to its session, and nothing else', async () => {
    const sessions = await open(await dataDir());
    const { token, session } = await sessions.create(user);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await sessions.resolve(token)).toMatchObject({ id: session.id, org: 'acme', userId: 'usr_1' });
    expect(await sessions.resolve(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(await sessions.resolve('not a token')).toBeNull();
  });

  it('stores only a hash of the token (mode 0600), so the file cannot be replayed as a cookie', async () => {
    const dir = await dataDir();
    const sessions = await open(dir);
    const { token } = await sessions.create(user);
    const file = path.join(dir, 'state', 'sessions.json');
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(token);
    expect(JSON.parse(text).sessions[0].tokenHash).toMatch(/^[0-9a-f]{64}$/);
    const { stat } = await import('node:fs/promises');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('ends a session left idle for 2 hours', async () => {
    const clock = manualClock();
    const sessions = await open(await dataDir(), clock);
    const { token } = await sessions.create(user);
    clock.advance(2 * HOUR - 1000);
    expect(await sessions.resolve(token)).not.toBeNull(); // activity restarts the idle clock
    clock.advance(2 * HOUR - 1000);
    expect(await sessions.resolve(token)).not.toBeNull();
    clock.advance(2 * HOUR);
    expect(await sessions.resolve(token)).toBeNull();
  });

  it('ends any session 12 hours after sign-in, however active', async () => {
    const clock = manualClock();
    const sessions = await open(await dataDir(), clock);
    const { token, session } = await sessions.create(user);
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(12 * HOUR);
    for (let i = 0; i < 11; i++) {
      clock.advance(HOUR);
      expect(await sessions.resolve(token)).not.toBeNull();
    }
    clock.advance(HOUR);
    expect(await sessions.resolve(token)).toBeNull();
  });

  it('survives a restart, and a revoked session stays revoked after one', async () => {
    const dir = await dataDir();
    const clock = manualClock();
    const first = await open(dir, clock);
    const kept = await first.create(user);
    const revoked = await first.create(user);
    await first.revoke(revoked.token);
    expect(await first.resolve(revoked.token)).toBeNull();
    await first.close();
    const second = await open(dir, clock);
    expect(await second.resolve(kept.token)).toMatchObject({ id: kept.session.id });
    expect(await second.resolve(revoked.token)).toBeNull();
  });

  it('saves activity at most once a minute, so idle expiry survives a restart', async () => {
    const dir = await dataDir();
    const clock = manualClock();
    const sessions = await open(dir, clock);
    const { token } = await sessions.create(user);
    clock.advance(90 * 60_000);
    await sessions.resolve(token);
    await sessions.close();
    const saved = JSON.parse(await readFile(path.join(dir, 'state', 'sessions.json'), 'utf8')).sessions[0];
    expect(saved.lastSeenAt).toBe(clock.now().toISOString());
    // 90 min after sign-in but only 60 min after the last activity: still signed in after a restart
    clock.advance(60 * 60_000);
    const restarted = await open(dir, clock);
    expect(await restarted.resolve(token)).not.toBeNull();
  });

  it('revokes every session of a user (the user was removed) and drops expired ones from the file', async () => {
    const dir = await dataDir();
    const clock = manualClock();
    const sessions = await open(dir, clock);
    const a = await sessions.create(user);
    const b = await sessions.create(user);
    const other = await sessions.create({ id: 'usr_2', org: 'acme' });
    expect(await sessions.revokeUser('usr_1')).toBe(2);
    expect(await sessions.resolve(a.token)).toBeNull();
    expect(await sessions.resolve(b.token)).toBeNull();
    expect(await sessions.resolve(other.token)).not.toBeNull();
    clock.advance(13 * HOUR);
    await sessions.create({ id: 'usr_3', org: 'acme' });
    const saved = JSON.parse(await readFile(path.join(dir, 'state', 'sessions.json'), 'utf8')).sessions;
    expect(saved.map((s: { userId: string }) => s.userId)).toEqual(['usr_3']);
  });

  describe('when the store refuses a removal (a full disk)', () => {
    /** The sessions of `dir`, whose removals fail while `refusing.now` is true. */
    async function refusingRemovals(dir: string, lines: string[] = []) {
      const real = (await stateIn(dir)).sessions;
      const refusing = { now: false };
      const store: SessionStore = {
        list: () => real.list(),
        find: (tokenHash) => real.find(tokenHash),
        create: (record) => real.create(record),
        remove: (ids) =>
          refusing.now ? Promise.reject(new StateFaultError('sessions.json', 'no space left on the device (ENOSPC)')) : real.remove(ids),
        touch: (seen) => real.touch(seen),
        onChange: (listener) => real.onChange(listener),
      };
      const clock = manualClock();
      const logger = createLogger({ level: 'warn', write: (line) => lines.push(line) });
      const sessions = await SessionService.open({ state: { sessions: store }, logger, now: clock.now });
      opened.push(sessions);
      return { sessions, refusing, clock };
    }

    it('rejects a sign-out, and the session stays signed in, here and after a restart', async () => {
      const dir = await dataDir();
      const { sessions, refusing, clock } = await refusingRemovals(dir);
      const { token, session } = await sessions.create(user);
      refusing.now = true;
      await expect(sessions.revoke(token)).rejects.toBeInstanceOf(StateFaultError);
      expect(await sessions.resolve(token)).toMatchObject({ id: session.id });
      await sessions.close();
      expect(await (await open(dir, clock)).resolve(token)).toMatchObject({ id: session.id });
    });

    it('still signs out the sessions of a removed user, logging that the store kept their records', async () => {
      const dir = await dataDir();
      const lines: string[] = [];
      const { sessions, refusing } = await refusingRemovals(dir, lines);
      const { token } = await sessions.create(user);
      refusing.now = true;
      expect(await sessions.revokeUser('usr_1')).toBe(1);
      // The record the store kept signs nobody in: a password session's user is looked up at each request.
      const noUsers = { byId: () => undefined } as unknown as UserService;
      expect(await sessionOfToken(token, { sessions, users: noUsers })).toEqual({ kind: 'invalid', token });
      expect(lines.join('\n')).toContain('could not save dashboard sessions');
    });
  });

  it('takes a session it knows for a change when the store cannot be read to confirm it, and answers an unknown token with the store\u2019s error, not a refusal', async () => {
    const dir = await dataDir();
    const real = (await stateIn(dir)).sessions;
    const down = new StateFaultError('the database', 'connection refused');
    const store: SessionStore = {
      list: () => real.list(),
      find: () => Promise.reject(down),
      create: (record) => real.create(record),
      remove: (ids) => real.remove(ids),
      touch: (seen) => real.touch(seen),
      onChange: (listener) => real.onChange(listener),
    };
    const sessions = await SessionService.open({ state: { sessions: store }, logger: silentLogger, now: manualClock().now });
    opened.push(sessions);
    const { token, session } = await sessions.create(user);
    expect(await sessions.resolve(token, { confirm: true })).toMatchObject({ id: session.id });
    await expect(sessions.resolve(newSessionToken())).rejects.toBe(down);
  });

  it('refuses to start on a damaged file, telling how to recover', async () => {
    const dir = await dataDir();
    await (await open(dir)).create(user);
    await writeFile(path.join(dir, 'state', 'sessions.json'), '{"version":1,"sessions":[{"id":1}]}');
    await expect(open(dir)).rejects.toThrow(/sessions\[0\]\.id must be a string; remove it to sign everybody out$/);
  });
});

describe('sessions in a state shared by two instances', () => {
  const dataDir = useDataDir(closeOpened);

  it('a session signed in through one is signed in on the other, and signed out on both by one sign-out', async () => {
    const dir = await dataDir();
    const clock = manualClock();
    const one = await open(dir, clock);
    const other = await open(dir, clock);
    const { token, session } = await one.create(user);
    await vi.waitFor(async () => expect(await other.resolve(token)).toMatchObject({ id: session.id }), { timeout: PROMPTLY_MS });
    await other.revoke(token);
    await vi.waitFor(async () => expect(await one.resolve(token)).toBeNull(), { timeout: PROMPTLY_MS });
  });

  /** An instance of `dir`'s sessions that never hears the store's change notices, as one whose notice is late. */
  async function deaf(dir: string, clock: ReturnType<typeof manualClock>) {
    const real = (await stateIn(dir)).sessions;
    const store: SessionStore = {
      list: () => real.list(),
      find: (tokenHash) => real.find(tokenHash),
      create: (record) => real.create(record),
      remove: (ids) => real.remove(ids),
      touch: (seen) => real.touch(seen),
      onChange: () => () => undefined,
    };
    const sessions = await SessionService.open({ state: { sessions: store }, logger: silentLogger, now: clock.now });
    opened.push(sessions);
    return sessions;
  }

  it('takes a session signed in through the other a moment ago, before the store announces it', async () => {
    const dir = await dataDir();
    const clock = manualClock();
    const late = await deaf(dir, clock);
    const { token, session } = await (await open(dir, clock)).create(user);
    expect(await late.resolve(token)).toMatchObject({ id: session.id, userId: 'usr_1' });
    expect(await late.resolve(token)).toMatchObject({ id: session.id });
  });

  it('refuses a change with a session signed out through the other, before the store announces it', async () => {
    const dir = await dataDir();
    const clock = manualClock();
    const one = await open(dir, clock);
    const { token } = await one.create(user);
    const late = await deaf(dir, clock);
    expect(await late.resolve(token)).not.toBeNull();
    await one.revoke(token);
    expect(await late.resolve(token, { confirm: true })).toBeNull();
    expect(await late.resolve(token)).toBeNull();
  });
});
