import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplicaKeys } from '../../src/apps/replica/replica-keys.js';
import { UpstreamClient } from '../../src/apps/replica/upstream-client.js';
import { generateKey } from '../../src/foundations/auth/key-format.js';
import { UnauthorizedError } from '../../src/foundations/errors/kinds.js';
import { createLogger, silentLogger } from '../../src/foundations/log/logger.js';

describe("a replica's refused sdk keys", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('are remembered for a while, at most 10,000 of them, the oldest forgotten first', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-keys-'));
    const asked: string[] = [];
    // The control plane as a fake fetch: every key is unknown (404).
    const fetch = (async (_url: string, init: RequestInit) => {
      asked.push(JSON.parse(String(init.body)).key as string);
      return new Response('{"error":{"code":"not_found","message":"sdk key not found"}}', { status: 404 });
    }) as typeof globalThis.fetch;
    const keys = await ReplicaKeys.open(
      dir,
      new UpstreamClient({ origin: 'http://upstream.invalid', token: 'svc_adm_x', fetch }),
      silentLogger,
    );
    const first = generateKey('sdk');
    await expect(keys.verify(first)).rejects.toThrow(UnauthorizedError);
    await expect(keys.verify(first)).rejects.toThrow(UnauthorizedError);
    expect(asked).toEqual([first]); // the second refusal came from memory
    for (let i = 0; i < 10_000; i++) await keys.verify(generateKey('sdk')).catch(() => undefined);
    await expect(keys.verify(first)).rejects.toThrow(UnauthorizedError);
    expect(asked.at(-1)).toBe(first); // forgotten to bound memory: asked again
  });

  it('say that a key expired, once its expiry passed, and that one rotated away was rotated', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-keys-'));
    const end = new Date(Date.now() + 200).toISOString();
    const expiring = generateKey('sdk');
    const rotated = generateKey('sdk');
    // The control plane as a fake fetch: one key expires at `end`, the other's rotation grace ends then.
    const fetch = (async (_url: string, init: RequestInit) => {
      const key = JSON.parse(String(init.body)).key as string;
      const verdict = { keyId: key, projectId: 'prj_1', environment: 'prod', validUntil: end };
      return Response.json(key === expiring ? { ...verdict, expiresAt: end } : verdict);
    }) as typeof globalThis.fetch;
    const keys = await ReplicaKeys.open(
      dir,
      new UpstreamClient({ origin: 'http://upstream.invalid', token: 'svc_adm_x', fetch }),
      silentLogger,
    );
    for (const key of [expiring, rotated]) expect((await keys.verify(key)).validUntil).toBe(end);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(end) - Date.now() + 20));
    await expect(keys.verify(expiring)).rejects.toThrow(`the sdk key ${expiring.slice(0, 16)}… expired at ${end}`);
    await expect(keys.verify(rotated)).rejects.toThrow(`was rotated and its grace period ended at ${end}`);
  });
});

describe("a replica's sdk key verdicts saved on disk", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('are not taken from a file damaged on disk: it is logged, and each key is verified again', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-replica-keys-'));
    const key = generateKey('sdk');
    const asked: string[] = [];
    const fetch = (async (_url: string, init: RequestInit) => {
      asked.push(JSON.parse(String(init.body)).key as string);
      return Response.json({ keyId: 'key_1', projectId: 'prj_shop', environment: 'prod' });
    }) as typeof globalThis.fetch;
    const upstream = new UpstreamClient({ origin: 'http://upstream.invalid', token: 'svc_adm_x', fetch });
    await (await ReplicaKeys.open(dir, upstream, silentLogger)).verify(key);
    const file = path.join(dir, 'replica', 'sdk-keys.json');
    const saved = await readFile(file, 'utf8');
    expect(saved).toContain('"projectId":"prj_shop"');

    // One bit: prj_shop becomes prj_chop, still JSON, and a key of another project.
    await writeFile(file, saved.replace('"prj_shop"', '"prj_chop"'));
    const logs: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'warn', write: (line) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
    const reopened = await ReplicaKeys.open(dir, upstream, logger);
    expect(reopened.known(key)).toBeUndefined();
    expect(logs).toEqual([expect.objectContaining({ level: 'warn', file, reason: 'checksum mismatch' })]);
    expect((await reopened.verify(key)).projectId).toBe('prj_shop');
    expect(asked).toEqual([key, key]);

    // A file saved before checksums (the JSON alone) is read as it is.
    await writeFile(file, (await readFile(file, 'utf8')).split('\n')[1]);
    expect((await ReplicaKeys.open(dir, upstream, logger)).known(key)?.projectId).toBe('prj_shop');
  });
});
