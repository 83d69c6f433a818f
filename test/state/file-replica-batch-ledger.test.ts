import { execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateFaultError } from '../../src/foundations/errors/kinds.js';
import { FileReplicaBatchLedger } from '../../src/foundations/state/files/file-replica-batch-ledger.js';

/** Makes a file refuse appends, as a full or read-only disk does: chattr +i for root, whom modes do not stop. */
function setWritable(file: string, writable: boolean): void {
  if (process.getuid?.() === 0) execFileSync('chattr', [writable ? '-i' : '+i', file]);
  else execFileSync('chmod', [writable ? 'u+w' : 'a-w', file]);
}

describe('the ledger of count batches taken from replicas (nothing counted twice)', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flagops-ledger-'));
    file = path.join(dir, 'state', 'replica-batches.jsonl');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('takes a batch once and refuses its retry', async () => {
    const ledger = new FileReplicaBatchLedger(file);
    expect(await ledger.claim('acme', 'batch-0001')).toBe(true);
    expect(await ledger.claim('acme', 'batch-0001')).toBe(false);
    expect(await ledger.claim('other', 'batch-0001')).toBe(true);
  });

  it('refuses a retry after a control-plane restart', async () => {
    expect(await new FileReplicaBatchLedger(file).claim('acme', 'batch-0001')).toBe(true);
    const restarted = new FileReplicaBatchLedger(file);
    expect(await restarted.claim('acme', 'batch-0001')).toBe(false);
    expect(await restarted.claim('acme', 'batch-0002')).toBe(true);
  });

  it('lets exactly one of two concurrent deliveries of a batch through', async () => {
    const ledger = new FileReplicaBatchLedger(file);
    const answers = await Promise.all([ledger.claim('acme', 'batch-0001'), ledger.claim('acme', 'batch-0001')]);
    expect(answers.filter(Boolean)).toHaveLength(1);
  });

  it('skips a torn last line and forgets ids older than a day at start', async () => {
    let now = Date.UTC(2026, 10, 21);
    expect(await new FileReplicaBatchLedger(file, 100, 24 * 3600_000, () => now).claim('acme', 'old-batch-1')).toBe(true);
    await appendFile(file, '{"org":"acme","id":"to');
    now += 25 * 3600_000;
    const later = new FileReplicaBatchLedger(file, 100, 24 * 3600_000, () => now);
    expect(await later.claim('acme', 'old-batch-1')).toBe(true);
    expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(1);
  });

  it('does not take a batch it could not record, so that the retry counts it once the disk takes writes again', async () => {
    const ledger = new FileReplicaBatchLedger(file);
    expect(await ledger.claim('acme', 'batch-0001')).toBe(true);
    setWritable(file, false);
    try {
      await expect(ledger.claim('acme', 'batch-0002')).rejects.toBeInstanceOf(StateFaultError);
    } finally {
      setWritable(file, true);
    }
    expect(await ledger.claim('acme', 'batch-0002')).toBe(true);
    expect(await ledger.claim('acme', 'batch-0002')).toBe(false);
  });
});
