import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { ConfigError } from '../config/config.js';
import { ConflictError, InvalidInputError, NotFoundError, UnauthorizedError } from '../errors/kinds.js';
import type { Logger } from '../log/logger.js';
import type { ControlState, KeyRecord, KeySet, KeyStore } from '../state/index.js';
import { hasControlCharacter } from '../validation/one-line.js';
import { type AuthChannel, AuthGuard } from './auth-guard.js';
import { checkBootstrapEntry, MAX_SECRET_LENGTH } from './bootstrap.js';
import { generateKey, isKeyKind, isOrgName, type KeyKind, keyPrefix, kindOfKey } from './key-format.js';
import { KeyHasher } from './key-hash.js';
import { checkKeyLimits, type KeyLimits, scopeOfKey } from './key-limits.js';
import type { CreatedKey, KeyView, Organisation, Principal } from './principal.js';

export interface KeyServiceOptions {
  /** Where keys and organisations are kept, and the pepper they are hashed with. */
  state: Pick<ControlState, 'keys' | 'pepper'>;
  now?: () => Date;
  newId?: () => string;
  random?: (size: number) => Buffer;
  /** Watches keys presented by requests (throttle, log, count of failures); the service shares one. */
  guard?: AuthGuard;
  /** Where a refused expired or rotated key is logged (with its prefix, at most once a minute per key). */
  logger?: Logger;
}

export interface CreateKeyInput extends KeyLimits {
  kind: KeyKind;
  name?: string;
  projectId?: string;
  environment?: EnvironmentName;
}

/** Rotation's grace period: at most a week, long enough to roll a new key out to every deployment. */
export const MAX_GRACE_SECONDS = 604_800;

/** A key that authenticated, with the moment it stops working (expiry or the end of a rotation's grace). */
interface Live {
  principal: Principal;
  /** Epoch ms; Infinity for a key that does not end. */
  endsAt: number;
  /** Why it ends, in words for the 401: "expired at …" or "was rotated …". */
  ending?: string;
}

/** Expired and rotated keys are logged once a minute per key at most: an application retrying would flood the log. */
const ENDED_LOG_INTERVAL_MS = 60_000;

const MAX_NAME_LENGTH = 100;
const MAX_KEY_LENGTH = 8 + MAX_SECRET_LENGTH;

interface IndexedKey {
  record: KeyRecord;
  digest: Buffer;
}

/**
 * Credentials and organisations, kept in the control plane's state (KeyStore). Reads are synchronous and in
 * memory; writes are serialized and durable before memory changes, so what `authenticate` sees is always what
 * a restart would see. Changes made elsewhere (another instance sharing the state) are read again when the
 * store announces them.
 */
export class KeyService {
  private content: KeySet = { organisations: [], keys: [] };
  /** Told whenever the keys change, here or through another control plane sharing the state. */
  private readonly changeListeners = new Set<() => void>();
  private byPrefix = new Map<string, IndexedKey[]>();
  /** raw key → principal, for keys that authenticated; pruned on every write, so a revoke takes effect at once. */
  private readonly authenticated = new Map<string, Live>();
  /** Key prefix → when its ending was last logged. */
  private readonly endedLogged = new Map<string, number>();
  private readonly logger: Logger | undefined;
  /** Key id → its graceEndsAt as last installed: a rotation changes a cached key's end. */
  private cachedGrace = new Map<string, string | undefined>();
  private readonly guard: AuthGuard;
  /** Writes and reloads, one at a time, so what is installed is never older than what was installed before. */
  private writes: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly random: (size: number) => Buffer;

  private constructor(
    private readonly store: KeyStore,
    private readonly hasher: KeyHasher,
    content: KeySet,
    options: KeyServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? randomUUID;
    this.random = options.random ?? randomBytes;
    this.guard = options.guard ?? new AuthGuard();
    this.logger = options.logger;
    this.install(content);
    store.onChange(() => {
      this.serialized(async () => this.install(await this.store.list())).catch(() => undefined);
    });
  }

  static async open(options: KeyServiceOptions): Promise<KeyService> {
    const content = await options.state.keys.list();
    const pepper = await options.state.pepper.get({ mayCreate: content.keys.length === 0 });
    const hasher = new KeyHasher(pepper);
    // Another pepper than the keys were hashed with would refuse every key, and the start would add a new admin key.
    await options.state.keys.matchPepper(hasher.pepperCheck());
    return new KeyService(options.state.keys, hasher, content, options);
  }

  /**
   * The principal of a valid, unrevoked, unexpired key, or null. The hot path is one Map lookup and a comparison
   * of the clock with the key's end.
   */
  authenticate(rawKey: string): Principal | null {
    const live = this.live(rawKey);
    return live !== null && this.inForce(live) ? live.principal : null;
  }

  /**
   * When a key stops working (epoch ms): its expiry or the end of its rotation's grace, Infinity when it does not
   * end, -Infinity for a key that is unknown or revoked. An open stream ends then.
   */
  endsAt(rawKey: string): number {
    return this.live(rawKey)?.endsAt ?? Number.NEGATIVE_INFINITY;
  }

  /** A known, unrevoked key (ended or not), or null. */
  private live(rawKey: string): Live | null {
    const cached = this.authenticated.get(rawKey);
    if (cached) return cached;
    if (typeof rawKey !== 'string' || rawKey.length > MAX_KEY_LENGTH || kindOfKey(rawKey) === null) return null;
    const candidates = this.byPrefix.get(keyPrefix(rawKey));
    if (!candidates) return null;
    const digest = this.hasher.digest(rawKey);
    // Hand-made bootstrap keys may share a prefix, so every candidate is compared.
    const match = candidates.find((c) => KeyHasher.equal(digest, c.digest));
    if (!match || match.record.revokedAt) return null;
    const live = liveOf(match.record);
    this.authenticated.set(rawKey, live);
    return live;
  }

  /**
   * authenticate() for a key presented by a request: a wrong key counts against the request's address (the
   * guard logs and counts it), and an address that failed too often gets RateLimitedError before its key is
   * checked. A key that already authenticated is answered from memory, unthrottled, so applications behind an
   * address someone else is failing from keep working. A key that expired, or whose rotation's grace ended, is
   * UnauthorizedError saying so (and logged with its prefix); it is no wrong guess, so it is not throttled.
   */
  authenticateRequest(rawKey: string, req: IncomingMessage, channel: AuthChannel): Principal | null {
    const known = this.authenticated.get(rawKey) ?? null;
    const live =
      known ??
      this.guard.checkKey(req, channel, kindOfKey(rawKey) !== null ? { keyPrefix: keyPrefix(rawKey) } : {}, () => this.live(rawKey));
    if (live === null) return null;
    if (this.inForce(live)) return live.principal;
    throw this.ended(live, channel);
  }

  /** Whether a key has not reached its end; a key without one (most) is not even compared with the clock. */
  private inForce(live: Live): boolean {
    return live.endsAt === Number.POSITIVE_INFINITY || live.endsAt > this.now().getTime();
  }

  /** The 401 of a key past its end, logged (with its prefix) at most once a minute per key. */
  private ended(live: Live, channel: AuthChannel): UnauthorizedError {
    const { prefix, name, org } = live.principal;
    const message = `the ${live.principal.kind} key ${prefix}… (${name}) ${live.ending}`;
    const now = this.now().getTime();
    if (now - (this.endedLogged.get(prefix) ?? Number.NEGATIVE_INFINITY) >= ENDED_LOG_INTERVAL_MS) {
      this.endedLogged.set(prefix, now);
      if (this.endedLogged.size > 10_000) this.endedLogged.delete(this.endedLogged.keys().next().value as string);
      this.logger?.warn('key refused: it has ended', { keyPrefix: prefix, org, via: channel, why: live.ending });
    }
    return new UnauthorizedError(message);
  }

  /**
   * An admin or agent principal, or UnauthorizedError: no, bad, revoked, expired or sdk key (an sdk key is 401 here).
   * With `req`, a wrong key is a failed authentication of that request (authenticateRequest).
   */
  controlPlanePrincipal(rawKey: string | null | undefined, req?: IncomingMessage): Principal {
    const principal = !rawKey ? null : req ? this.authenticateRequest(rawKey, req, 'control plane') : this.authenticate(rawKey);
    if (!principal) throw new UnauthorizedError();
    if (principal.kind === 'sdk')
      throw new UnauthorizedError('an sdk key is for the evaluation API only; the control plane needs an admin or agent key');
    return principal;
  }

  /** An sdk principal (with its project and environment), or UnauthorizedError; `req` as for controlPlanePrincipal. */
  evaluationPrincipal(rawKey: string | null | undefined, req?: IncomingMessage): Principal {
    const principal = !rawKey ? null : req ? this.authenticateRequest(rawKey, req, 'evaluation') : this.authenticate(rawKey);
    if (!principal) throw new UnauthorizedError();
    if (principal.kind !== 'sdk') throw new UnauthorizedError('the evaluation API needs an sdk key');
    return principal;
  }

  /** When a key stops working (expiry, or the end of a rotation's grace), or undefined when it does not. */
  validUntil(record: Pick<KeyRecord, 'expiresAt' | 'graceEndsAt'>): string | undefined {
    const ends = endOf(record);
    return Number.isFinite(ends) ? new Date(ends).toISOString() : undefined;
  }

  organisations(): Organisation[] {
    return this.content.organisations.map((o) => ({ ...o }));
  }

  hasOrganisation(org: string): boolean {
    return this.content.organisations.some((o) => o.name === org);
  }

  /**
   * Creates a key; the returned `key` is the only time it is ever shown. `createdBy`: the id of the key that
   * asks for it, kept with the new key (listed with it, for whoever reads who made which key).
   */
  async createKey(org: string, input: CreateKeyInput, createdBy?: string): Promise<CreatedKey> {
    const checked = checkCreateInput(org, input, this.now());
    return this.add((current) => {
      let key = generateKey(checked.kind, this.random);
      // Generated prefixes are kept unique so that the audit trail's prefix names exactly one key.
      while (current.keys.some((k) => k.prefix === keyPrefix(key))) key = generateKey(checked.kind, this.random);
      const prefix = keyPrefix(key);
      const record: KeyRecord = {
        id: this.newId(),
        org,
        kind: checked.kind,
        name: checked.name ?? prefix,
        prefix,
        hash: KeyHasher.encode(this.hasher.digest(key)),
        ...(checked.kind === 'sdk' ? { projectId: checked.projectId, environment: checked.environment } : {}),
        ...limitsOf(checked),
        createdAt: this.now().toISOString(),
        ...(createdBy !== undefined ? { createdBy } : {}),
      };
      return { organisations: [this.organisation(org)], keys: [record], result: { ...toView(record), key } };
    });
  }

  /**
   * Replaces a live key of `org` with a new one of the same kind, name and limits; the old one keeps working for
   * `graceSeconds` more (never past its own expiry), then gets 401 saying it was rotated. A revoked key, one
   * already rotated, or one that expired is 409: rotate its replacement, or create a new key. Another
   * organisation's key, or one `allowed` refuses, is NotFoundError like an unknown one. `rotatedBy`: the id of
   * the key that asks, the new key's `createdBy` (the old key keeps who made it).
   */
  async rotateKey(
    org: string,
    id: string,
    graceSeconds = 0,
    by: { rotatedBy?: string; allowed?: (record: KeyRecord) => boolean } = {},
  ): Promise<CreatedKey> {
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS)
      throw new InvalidInputError(`graceSeconds must be a whole number from 0 to ${MAX_GRACE_SECONDS}`, 'graceSeconds');
    return this.serialized(async () => {
      let key = '';
      const outcome = await this.store.rotate(org, id, (old, current) => {
        if (by.allowed !== undefined && !by.allowed(old)) throw new NotFoundError(`key ${JSON.stringify(id)}`);
        if (old.revokedAt) throw new ConflictError(`key ${old.prefix}… was revoked at ${old.revokedAt}; a revoked key cannot be rotated`);
        if (old.replacedBy !== undefined)
          throw new ConflictError(
            `key ${old.prefix}… was already rotated at ${old.rotatedAt}; rotate its replacement (id ${old.replacedBy})`,
          );
        const now = this.now();
        // Its replacement would carry the same expiry, so it would be born ended.
        if (old.expiresAt !== undefined && Date.parse(old.expiresAt) <= now.getTime())
          throw new ConflictError(`key ${old.prefix}… expired at ${old.expiresAt}; an expired key cannot be rotated: create a new key`);
        key = generateKey(old.kind, this.random);
        while (current.keys.some((k) => k.prefix === keyPrefix(key))) key = generateKey(old.kind, this.random);
        const { id: _id, prefix: _prefix, hash: _hash, createdAt: _created, rotatedFrom: _from, createdBy: _by, ...kept } = old;
        const replacement: KeyRecord = {
          id: this.newId(),
          ...kept,
          prefix: keyPrefix(key),
          hash: KeyHasher.encode(this.hasher.digest(key)),
          createdAt: now.toISOString(),
          rotatedFrom: old.id,
          ...(by.rotatedBy !== undefined ? { createdBy: by.rotatedBy } : {}),
        };
        // A grace never lengthens the old key's life past its own expiry.
        const graceEnds = Math.min(now.getTime() + graceSeconds * 1000, endOf({ expiresAt: old.expiresAt }));
        return { replacement, rotatedAt: now.toISOString(), graceEndsAt: new Date(graceEnds).toISOString() };
      });
      if (!outcome) throw new NotFoundError(`key ${JSON.stringify(id)}`);
      this.install(await this.store.list());
      return { ...toView(outcome.replacement), key };
    });
  }

  /**
   * Whether the keys `a` and `b` of `org` are one credential: the same key, or keys made from one another by
   * rotation (however many times), told apart by id. A key created with another is another credential, as
   * one created by anybody else.
   */
  sameCredential(org: string, a: string, b: string): boolean {
    return a === b || this.rotationOrigin(org, a) === this.rotationOrigin(org, b);
  }

  /** The key a line of rotations ending at `id` started from (`id` itself when it was not made by a rotation). */
  private rotationOrigin(org: string, id: string): string {
    const seen = new Set([id]);
    let current = id;
    for (let from = this.keyRecord(org, current)?.rotatedFrom; from !== undefined && !seen.has(from); ) {
      seen.add(from);
      current = from;
      from = this.keyRecord(org, current)?.rotatedFrom;
    }
    return current;
  }

  private keyRecord(org: string, id: string): KeyRecord | undefined {
    return this.content.keys.find((k) => k.org === org && k.id === id);
  }

  /**
   * Whether the key `id` of `org` is one credential with a key that has `prefix` (sameCredential): for a
   * proposal made before proposals recorded their key's id, when its prefix was all that named the key.
   */
  sameCredentialAsPrefix(org: string, id: string, prefix: string): boolean {
    return this.content.keys.some((k) => k.org === org && k.prefix === prefix && this.sameCredential(org, id, k.id));
  }

  /** A key of `org` as listed, or NotFoundError. */
  keyView(org: string, id: string): KeyView {
    const record = this.content.keys.find((k) => k.org === org && k.id === id);
    if (!record) throw new NotFoundError(`key ${JSON.stringify(id)}`);
    return toView(record);
  }

  /** Every key of the organisation, revoked ones included (marked by `revokedAt`), oldest first. */
  listKeys(org: string): KeyView[] {
    return this.content.keys.filter((k) => k.org === org).map(toView);
  }

  /** Revokes a key of `org`; another organisation's key is NotFoundError like an unknown one. Idempotent. */
  async revokeKey(org: string, id: string): Promise<KeyView> {
    return this.serialized(async () => {
      const record = await this.store.revoke(org, id, this.now().toISOString());
      if (!record) throw new NotFoundError(`key ${JSON.stringify(id)}`);
      this.install(await this.store.list());
      return toView(record);
    });
  }

  /**
   * Makes each FLAGOPS_BOOTSTRAP_KEYS pair exist. The same key finds its existing record, so
   * restarts create nothing new. A revoked bootstrap key stays revoked: a restart must not undo a revoke.
   */
  async bootstrap(pairs: ReadonlyArray<{ org: string; key: string }>): Promise<{ warnings: string[] }> {
    const entries = pairs.map((p, i) => checkBootstrapEntry(p.org, p.key, i));
    const warnings = entries.flatMap((e) => (e.warning ? [e.warning] : []));
    await this.add((current) => {
      const organisations: Organisation[] = [];
      const keys: KeyRecord[] = [];
      for (const entry of entries) {
        const digest = this.hasher.digest(entry.key);
        const existing = [...current.keys, ...keys].find((k) => k.prefix === entry.prefix && sameDigest(k, digest));
        if (existing && existing.org !== entry.org) {
          throw new ConfigError(
            `FLAGOPS_BOOTSTRAP_KEYS: key ${entry.prefix}… is given for organisation ${entry.org} but already belongs to organisation ${existing.org}; a key belongs to one organisation, so give ${entry.org} a different key`,
          );
        }
        organisations.push(this.organisation(entry.org));
        if (existing) {
          if (existing.revokedAt)
            warnings.push(
              `bootstrap key ${entry.prefix}… of organisation ${entry.org} was revoked; it stays revoked, remove it from FLAGOPS_BOOTSTRAP_KEYS`,
            );
          continue;
        }
        if ([...current.keys, ...keys].some((k) => k.prefix === entry.prefix)) {
          warnings.push(`bootstrap key ${entry.prefix}… shares its prefix with another key, so the audit trail cannot tell them apart`);
        }
        keys.push({
          id: this.newId(),
          org: entry.org,
          kind: entry.kind,
          name: 'bootstrap',
          prefix: entry.prefix,
          hash: KeyHasher.encode(digest),
          createdAt: this.now().toISOString(),
        });
      }
      return { organisations, keys, result: undefined };
    });
    return { warnings };
  }

  /** Adds what `plan` returns through the store, then makes the store's keys current. */
  private add<T>(plan: (current: Readonly<KeySet>) => { organisations?: Organisation[]; keys?: KeyRecord[]; result: T }): Promise<T> {
    return this.serialized(async () => {
      const result = await this.store.add(plan);
      this.install(await this.store.list());
      return result;
    });
  }

  /** Runs `task` after every write and reload before it. */
  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const result = this.writes.then(task, task);
    this.writes = result.catch(() => undefined);
    return result;
  }

  private install(content: KeySet): void {
    const byPrefix = new Map<string, IndexedKey[]>();
    for (const record of content.keys) {
      const digest = KeyHasher.decode(record.hash);
      if (!digest) continue; // an unknown hash scheme can never match; such a key cannot authenticate
      const list = byPrefix.get(record.prefix) ?? [];
      list.push({ record, digest });
      byPrefix.set(record.prefix, list);
    }
    this.content = content;
    this.byPrefix = byPrefix;
    // Keys are only added, revoked and rotated: a cached principal stays right while its key is unchanged.
    const unchanged = new Map(content.keys.filter((k) => !k.revokedAt).map((k) => [k.id, k.graceEndsAt]));
    for (const [rawKey, live] of this.authenticated) {
      const id = live.principal.keyId;
      if (!unchanged.has(id) || unchanged.get(id) !== this.cachedGrace.get(id)) this.authenticated.delete(rawKey);
    }
    this.cachedGrace = unchanged;
    for (const listener of this.changeListeners) listener();
  }

  /** Calls `listener` after each change of the keys (created, revoked, rotated; here or elsewhere); returns its removal. */
  onKeysChanged(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** `org` as a new organisation; the store keeps one that exists as it is. */
  private organisation(org: string): Organisation {
    return { name: org, createdAt: this.now().toISOString() };
  }
}

function sameDigest(record: KeyRecord, digest: Buffer): boolean {
  const stored = KeyHasher.decode(record.hash);
  return stored !== null && KeyHasher.equal(stored, digest);
}

function checkCreateInput(org: string, input: CreateKeyInput, now: Date): CreateKeyInput {
  if (!isOrgName(org)) throw new InvalidInputError(`organisation ${JSON.stringify(org)} is not a valid name`, 'org');
  const { kind, name, projectId, environment } = input ?? ({} as CreateKeyInput);
  if (!isKeyKind(kind)) throw new InvalidInputError('kind must be admin, agent or sdk', 'kind');
  const limits = checkKeyLimits(kind, input, now);
  // A key's name is the author of the commits it makes: one line, as a git identity must be.
  if (
    name !== undefined &&
    (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH || hasControlCharacter(name))
  ) {
    throw new InvalidInputError(`name must be one line of at most ${MAX_NAME_LENGTH} characters, without control characters`, 'name');
  }
  if (kind === 'sdk') {
    if (typeof projectId !== 'string' || projectId === '') throw new InvalidInputError('projectId is required for an sdk key', 'projectId');
    if (!isEnvironmentName(environment))
      throw new InvalidInputError('environment must be dev, staging or prod for an sdk key', 'environment');
    return { kind, name: name?.trim(), projectId, environment, ...limits };
  }
  if (projectId !== undefined)
    throw new InvalidInputError(`projectId is only for sdk keys; an ${kind} key is limited with projects: [<project id>...]`, 'projectId');
  if (environment !== undefined)
    throw new InvalidInputError(`environment is only for sdk keys; an ${kind} key is limited with environments: [...]`, 'environment');
  return { kind, name: name?.trim(), ...limits };
}

/** The limit fields of a checked input, only those given. */
function limitsOf(input: KeyLimits): KeyLimits {
  const limits: KeyLimits = {};
  if (input.projects !== undefined) limits.projects = input.projects;
  if (input.environments !== undefined) limits.environments = input.environments;
  if (input.expiresAt !== undefined) limits.expiresAt = input.expiresAt;
  return limits;
}

function toView(record: KeyRecord): KeyView {
  const { hash: _hash, ...view } = record;
  return view;
}

function toPrincipal(record: KeyRecord): Principal {
  const principal: Principal = { org: record.org, kind: record.kind, keyId: record.id, prefix: record.prefix, name: record.name };
  if (record.projectId !== undefined) principal.projectId = record.projectId;
  if (record.environment !== undefined) principal.environment = record.environment;
  const scope = scopeOfKey(record);
  if (scope !== undefined) principal.scope = scope;
  if (record.expiresAt !== undefined) principal.expiresAt = record.expiresAt;
  return Object.freeze(principal);
}

/** Epoch ms at which a key stops working: the earlier of its expiry and its rotation's grace (Infinity: never). */
function endOf(record: Pick<KeyRecord, 'expiresAt' | 'graceEndsAt'>): number {
  const expires = record.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(record.expiresAt);
  const graceEnds = record.graceEndsAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(record.graceEndsAt);
  return Math.min(expires, graceEnds);
}

/** A key's principal and its end: the earlier of its expiry and its rotation's grace. */
function liveOf(record: KeyRecord): Live {
  const expires = record.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(record.expiresAt);
  const graceEnds = record.graceEndsAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(record.graceEndsAt);
  const live: Live = { principal: toPrincipal(record), endsAt: endOf(record) };
  if (graceEnds <= expires && record.graceEndsAt !== undefined)
    live.ending = `was rotated at ${record.rotatedAt}; its grace period ended at ${record.graceEndsAt}. Use the key that replaced it (id ${record.replacedBy})`;
  else if (record.expiresAt !== undefined) live.ending = `expired at ${record.expiresAt}`;
  return live;
}
