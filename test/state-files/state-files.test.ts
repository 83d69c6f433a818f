import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileKeyStore } from '../../src/foundations/state/files/file-key-store.js';
import { FileSessionStore } from '../../src/foundations/state/files/file-session-store.js';
import { readJsonStateFile, writeJsonStateFile } from '../../src/foundations/state-files/state-files.js';

describe('runtime state files (keys, users, sessions)', () => {
  it('read as undefined before the first write, and back as written, readable by the owner only', async () => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'flagops-state-')), 'keys.json');
    expect(await readJsonStateFile(file)).toBeUndefined();
    await writeJsonStateFile(file, { version: 1, keys: [] });
    expect(await readJsonStateFile(file)).toEqual({ version: 1, keys: [] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toBe('{\n  "version": 1,\n  "keys": []\n}\n');
  });

  it('refuse a damaged file with its name and what to do, instead of starting empty', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-state-'));
    const keys = path.join(dir, 'keys.json');
    const sessions = path.join(dir, 'sessions.json');
    await writeFile(keys, '{"version": 1, "keys": [');
    await writeFile(sessions, 'not json');
    await expect(new FileKeyStore(dir).list()).rejects.toThrow(`${keys} is not valid JSON`);
    await expect(new FileSessionStore(dir).list()).rejects.toThrow(
      /sessions\.json is not valid JSON: .*; remove it to sign everybody out$/,
    );
  });
});
