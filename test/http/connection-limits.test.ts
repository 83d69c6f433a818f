import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionCap, openFileLimit } from '../../src/foundations/http/connection-limits.js';

/** The caps docs/operations.md lists: the ports' shares of the soft open-file limit. */
describe('connection caps', () => {
  let dir: string;
  const limits = async (soft: string, hard: string) => {
    const file = path.join(dir, `limits-${soft}`);
    await writeFile(
      file,
      'Limit                     Soft Limit           Hard Limit           Units     \n' +
        'Max processes             63704                63704                processes \n' +
        `Max open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     \n`,
    );
    return file;
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-limits-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads the soft limit on open files', async () => {
    expect(openFileLimit(await limits('20000', '40000'))).toBe(20000);
    expect(openFileLimit(await limits('unlimited', 'unlimited'))).toBe(1_048_576);
    expect(openFileLimit(path.join(dir, 'absent'))).toBe(1024);
  });

  it('gives the evaluation port 60 % of it and the control port 20 %, leaving 20 % for files', () => {
    expect([connectionCap('evaluation', 20000), connectionCap('control', 20000), connectionCap('replica', 20000)]).toEqual([
      12000, 4000, 12000,
    ]);
    expect([connectionCap('evaluation', 1024), connectionCap('control', 1024)]).toEqual([614, 204]);
  });
});
