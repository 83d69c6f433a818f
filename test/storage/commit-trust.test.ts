import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileCommitTrustStore } from '../../src/foundations/state/files/file-commit-trust-store.js';
import { loadSigningKey } from '../../src/foundations/storage/commit-trust.js';
import { CommitSigner } from '../../src/foundations/storage/git/commit-signature.js';
import { type CommitObject, hashObject, serializeCommit } from '../../src/foundations/storage/git/git-objects.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flagops-trust-'));
  dirs.push(dir);
  return join(dir, 'state');
}
const trustIn = (dir: string) => new FileCommitTrustStore(dir);
const unsignedTrailersUpTo = (dir: string, org: string, head: () => Promise<string | null>) => trustIn(dir).unsignedTrailersUpTo(org, head);

const who = { name: 'deploy-bot', email: 'svc_agt_3kq9x2ab@keys.flagops', timestamp: 1_767_258_000, timezoneOffset: 0 };
const unsigned: CommitObject = {
  tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904',
  parents: [],
  author: who,
  committer: { ...who, name: 'flagops', email: 'flagops@localhost' },
  message: 'kill a in prod\n\nFlagops-Action: kill\nFlagops-Actor-Type: agent\n',
};
const oidOf = (commit: CommitObject) => hashObject('commit', serializeCommit(commit));

describe('a commit signature', () => {
  const signer = new CommitSigner(Buffer.alloc(32, 1));

  it('is the last trailer line, and verifies for exactly the signed commit', () => {
    const signed = signer.sign(unsigned);
    expect(signed.message).toMatch(
      /^kill a in prod\n\nFlagops-Action: kill\nFlagops-Actor-Type: agent\nFlagops-Signature: [0-9a-f]{64}\n$/,
    );
    expect(signer.verify(oidOf(signed), signed)).toBe(true);
  });

  it('does not verify once anything it covers changed, under another key, or for another object id', () => {
    const signed = signer.sign(unsigned);
    const changed = [
      { ...signed, tree: 'a'.repeat(40) },
      { ...signed, parents: ['b'.repeat(40)] },
      { ...signed, author: { ...who, name: 'ops-admin' } },
      { ...signed, message: signed.message.replace('Flagops-Actor-Type: agent', 'Flagops-Actor-Type: admin') },
    ];
    for (const commit of changed) expect(signer.verify(oidOf(commit), commit)).toBe(false);
    expect(new CommitSigner(Buffer.alloc(32, 2)).verify(oidOf(signed), signed)).toBe(false);
    expect(signer.verify('c'.repeat(40), signed)).toBe(false);
    expect(signer.verify(oidOf(unsigned), unsigned)).toBe(false);
  });

  it('needs a key of at least 32 bytes', () => {
    expect(() => new CommitSigner(Buffer.alloc(16))).toThrow(/at least 32 bytes/);
  });
});

describe('the signing key', () => {
  it('is created once in state/commit-signing-key, readable by its owner only, and the same at every start', async () => {
    const dir = stateDir();
    const first = await loadSigningKey(trustIn(dir));
    expect(first).toHaveLength(32);
    expect(statSync(join(dir, 'commit-signing-key')).mode & 0o777).toBe(0o600);
    expect(await loadSigningKey(trustIn(dir))).toEqual(first);
    const together = await Promise.all([loadSigningKey(trustIn(stateDir())), loadSigningKey(trustIn(dir))]);
    expect(together[1]).toEqual(first);
  });

  it('is FLAGOPS_COMMIT_SIGNING_KEY when set (at least 32 characters), and then no file is written', async () => {
    const dir = stateDir();
    const configured = 'shared-by-every-control-plane-0123456789';
    expect(await loadSigningKey(trustIn(dir), configured)).toEqual(Buffer.from(configured));
    await expect(loadSigningKey(trustIn(dir), 'too-short')).rejects.toThrow(/at least 32 characters/);
    expect(() => statSync(join(dir, 'commit-signing-key'))).toThrow();
  });

  it('refuses a damaged key file rather than replacing it, without naming a path', async () => {
    const dir = stateDir();
    await loadSigningKey(trustIn(dir));
    writeFileSync(join(dir, 'commit-signing-key'), 'not hex\n');
    const err = await loadSigningKey(trustIn(dir)).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/commit-signing-key is not a hexadecimal key/);
    expect((err as Error).message).not.toContain(dir);
  });
});

describe('the head up to which unsigned trailers are believed', () => {
  it('is recorded the first time and kept, whatever main holds later', async () => {
    const dir = stateDir();
    const head = 'd'.repeat(40);
    expect(await unsignedTrailersUpTo(dir, 'acme', async () => head)).toBe(head);
    expect(await unsignedTrailersUpTo(dir, 'acme', async () => 'e'.repeat(40))).toBe(head);
    expect(readFileSync(join(dir, 'unsigned-trailers', 'acme'), 'utf8')).toBe(`${head}\n`);
  });

  it('is none for a repository that was empty or new', async () => {
    const dir = stateDir();
    expect(await unsignedTrailersUpTo(dir, 'globex', async () => null)).toBeNull();
    expect(await unsignedTrailersUpTo(dir, 'globex', async () => 'f'.repeat(40))).toBeNull();
  });
});
