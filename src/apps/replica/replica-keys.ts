import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { kindOfKey } from '../../foundations/auth/key-format.js';
import { KeyHasher, loadPepper } from '../../foundations/auth/key-hash.js';
import { UnauthorizedError } from '../../foundations/errors/kinds.js';
import type { Logger } from '../../foundations/log/logger.js';
import { readChecksummed, withChecksum } from '../../foundations/state-files/checksummed-text.js';
import { writeFileAtomic } from '../../foundations/state-files/state-files.js';
import { type UpstreamClient, UpstreamError, UpstreamUnavailableError } from './upstream-client.js';

export interface SdkVerdict {
  keyId: string;
  projectId: string;
  environment: EnvironmentName;
  /** A key that ends (it expires, or was rotated): when (ISO-8601); the replica refuses it from then on. */
  validUntil?: string;
  /** A key that expires: when; a `validUntil` before it is the end of a rotation's grace. */
  expiresAt?: string;
}

const NEGATIVE_TTL_MS = 10_000;
/** Wrong keys remembered at most (the oldest forgotten first), so a flood of them cannot grow memory. */
const MAX_REFUSED = 10_000;
const MAX_KEY_LENGTH = 200;

/**
 * SDK keys on a replica. The replica holds no key records: a key it has not seen is sent to the control
 * plane once (POST /api/v1/replica/keys/verify) and the verdict is kept — in memory by key, on disk by an
 * HMAC under the replica's own pepper, so a restart while upstream is down still knows its keys and the file
 * gives nothing away. Why not copy the hashes: they are HMACs under the control plane's pepper, and handing
 * that secret to every edge machine would let one stolen replica test guesses of hand-made admin keys.
 * Revocations arrive with the key list (ids only), read when the control plane's stream says the keys changed and
 * every 10 s besides, and drop the verdict.
 */
export class ReplicaKeys {
  private readonly retainedListeners = new Set<() => void>();
  private readonly byKey = new Map<string, SdkVerdict>();
  private byDigest = new Map<string, SdkVerdict>();
  private readonly refused = new Map<string, number>();
  /** Keys that ended (expired, or rotated and their grace over), by key, with the words of their 401, as the control plane says them. */
  private readonly ended = new Map<string, string>();
  private readonly inFlight = new Map<string, Promise<SdkVerdict>>();
  private readonly now: () => number = Date.now;

  private constructor(
    private readonly file: string,
    private readonly hasher: KeyHasher,
    private readonly upstream: UpstreamClient,
  ) {}

  /**
   * The verdicts saved in `<dataDir>/replica/sdk-keys.json`. A file damaged on disk (its checksum does not
   * match, it does not parse) is not believed: a warning names it, and every key is verified with the control
   * plane again, as a key never seen (503 while it is unreachable), rather than be served a verdict that was
   * not the control plane's. One saved before checksums is read as it is.
   */
  static async open(dataDir: string, upstream: UpstreamClient, logger: Logger): Promise<ReplicaKeys> {
    const dir = path.join(dataDir, 'replica');
    const keys = new ReplicaKeys(path.join(dir, 'sdk-keys.json'), new KeyHasher(await loadPepperIn(dir)), upstream);
    const text = await readFile(keys.file, 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : err));
    if (text === undefined) return keys;
    const saved = typeof text === 'string' ? savedVerdicts(text) : `it cannot be read (${text.code ?? text.message})`;
    if (typeof saved === 'string') {
      logger.warn('the saved sdk key verdicts are damaged and not used; each key is verified with the control plane again', {
        file: keys.file,
        reason: saved,
      });
    } else keys.byDigest = saved;
    return keys;
  }

  /** The verdict of a key seen before and still valid, synchronously (the hot path), or undefined. */
  known(rawKey: string): SdkVerdict | undefined {
    let verdict = this.byKey.get(rawKey);
    if (!verdict) {
      verdict = this.byDigest.get(this.digest(rawKey));
      if (verdict) this.byKey.set(rawKey, verdict);
    }
    if (verdict?.validUntil !== undefined && Date.parse(verdict.validUntil) <= this.now()) {
      this.rememberEnded(rawKey, verdict.validUntil, verdict.expiresAt);
      return undefined;
    }
    return verdict;
  }

  /**
   * Until when a key seen before holds (epoch ms): its verdict's end, Infinity when it has none, -Infinity when
   * it is unknown, revoked or ended. An open stream ends then.
   */
  validUntil(rawKey: string): number {
    const verdict = this.known(rawKey);
    if (verdict === undefined) return Number.NEGATIVE_INFINITY;
    return verdict.validUntil === undefined ? Number.POSITIVE_INFINITY : Date.parse(verdict.validUntil);
  }

  /** The key's verdict, asking upstream when it is new: 401 for a bad key, 503 when upstream cannot say. */
  async verify(rawKey: string | null): Promise<SdkVerdict> {
    if (rawKey === null || rawKey.length > MAX_KEY_LENGTH || kindOfKey(rawKey) !== 'sdk') throw new UnauthorizedError();
    const known = this.known(rawKey);
    if (known) return known;
    const ended = this.ended.get(rawKey);
    if (ended !== undefined) throw new UnauthorizedError(ended);
    if ((this.refused.get(rawKey) ?? 0) > Date.now()) throw new UnauthorizedError();
    let pending = this.inFlight.get(rawKey);
    if (!pending) {
      pending = this.ask(rawKey).finally(() => this.inFlight.delete(rawKey));
      this.inFlight.set(rawKey, pending);
    }
    return pending;
  }

  /**
   * Drops the verdicts of keys upstream no longer lists as valid, and learns when the valid ones end (a key
   * rotated since it was verified: its grace period's end).
   */
  async retain(valid: ReadonlyMap<string, string | undefined>): Promise<void> {
    try {
      await this.retainOnly(valid);
    } finally {
      for (const listener of this.retainedListeners) listener();
    }
  }

  /** Calls `listener` each time the list of valid keys was read from upstream (streams of keys gone end then). */
  onRetained(listener: () => void): void {
    this.retainedListeners.add(listener);
  }

  private async retainOnly(valid: ReadonlyMap<string, string | undefined>): Promise<void> {
    let changed = false;
    for (const [key, verdict] of this.byKey) {
      if (!valid.has(verdict.keyId)) {
        this.byKey.delete(key);
        // Known to end (rotated) and gone from the list: its grace is over. A key without an end was revoked.
        if (verdict.validUntil !== undefined) this.rememberEnded(key, verdict.validUntil, verdict.expiresAt);
      } else this.byKey.set(key, withEnd(verdict, valid.get(verdict.keyId)));
    }
    for (const [digest, verdict] of this.byDigest) {
      if (!valid.has(verdict.keyId)) {
        this.byDigest.delete(digest);
        changed = true;
      } else if (verdict.validUntil !== valid.get(verdict.keyId)) {
        this.byDigest.set(digest, withEnd(verdict, valid.get(verdict.keyId)));
        changed = true;
      }
    }
    if (changed) await this.persist();
  }

  private rememberEnded(rawKey: string, validUntil: string, expiresAt: string | undefined): void {
    const why =
      validUntil === expiresAt
        ? `expired at ${expiresAt}`
        : `was rotated and its grace period ended at ${validUntil}; use the key that replaced it`;
    this.ended.set(rawKey, `the sdk key ${rawKey.slice(0, 16)}… ${why}`);
    if (this.ended.size > MAX_REFUSED) this.ended.delete(this.ended.keys().next().value as string);
  }

  private async ask(rawKey: string): Promise<SdkVerdict> {
    try {
      const verdict = await this.upstream.postJson<SdkVerdict>('/api/v1/replica/keys/verify', { key: rawKey });
      this.byKey.set(rawKey, verdict);
      this.byDigest.set(this.digest(rawKey), verdict);
      await this.persist();
      return verdict;
    } catch (err) {
      if (err instanceof UpstreamError && err.status === 404) {
        this.refused.set(rawKey, Date.now() + NEGATIVE_TTL_MS);
        if (this.refused.size > MAX_REFUSED) this.refused.delete(this.refused.keys().next().value as string);
        throw new UnauthorizedError();
      }
      throw new UpstreamUnavailableError('this replica cannot verify a new sdk key while the control plane is unreachable; retry shortly');
    }
  }

  private digest(rawKey: string): string {
    return this.hasher.digest(rawKey).toString('hex');
  }

  private persist(): Promise<void> {
    return writeFileAtomic(this.file, withChecksum(JSON.stringify(Object.fromEntries(this.byDigest))), 0o600);
  }
}

/** The verdicts by digest a saved file holds, or why it cannot be believed. */
function savedVerdicts(text: string): Map<string, SdkVerdict> | string {
  const checked = readChecksummed(text);
  if ('damaged' in checked) return checked.damaged;
  let saved: unknown;
  try {
    saved = JSON.parse(checked.content);
  } catch {
    return 'it is not JSON';
  }
  if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) return 'it does not hold sdk key verdicts';
  const entries = Object.entries(saved as Record<string, unknown>);
  if (!entries.every(([, verdict]) => isVerdict(verdict))) return 'it does not hold sdk key verdicts';
  return new Map(entries as Array<[string, SdkVerdict]>);
}

function isVerdict(value: unknown): value is SdkVerdict {
  const v = value as Partial<Record<keyof SdkVerdict, unknown>> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.keyId === 'string' &&
    typeof v.projectId === 'string' &&
    isEnvironmentName(v.environment) &&
    (v.validUntil === undefined || typeof v.validUntil === 'string') &&
    (v.expiresAt === undefined || typeof v.expiresAt === 'string')
  );
}

function withEnd(verdict: SdkVerdict, validUntil: string | undefined): SdkVerdict {
  if (verdict.validUntil === validUntil) return verdict;
  const { validUntil: _old, ...rest } = verdict;
  return validUntil === undefined ? rest : { ...rest, validUntil };
}

async function loadPepperIn(dir: string): Promise<Buffer> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return loadPepper(dir, true);
}
