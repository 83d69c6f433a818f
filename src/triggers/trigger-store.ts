import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type EnvironmentName, isEnvironmentName } from '@flagops/core';
import { KeyHasher, loadPepper } from '../auth/key-hash.js';
import { NotFoundError } from '../errors/kinds.js';
import { readJsonStateFile, writeJsonStateFile } from '../state-files/state-files.js';

/** One trigger as stored: the secret of its URL only as an HMAC under the installation's pepper. */
export interface TriggerRecord {
  id: string;
  org: string;
  flagId: string;
  environment: EnvironmentName;
  name: string;
  action: 'kill';
  secretHash: string;
  createdAt: string;
}

/** A trigger as the API shows it: never its secret or hash. */
export interface TriggerView {
  id: string;
  name: string;
  action: 'kill';
  flagId: string;
  environment: EnvironmentName;
  createdAt: string;
}

export interface CreatedTrigger {
  trigger: TriggerView;
  /** The secret of its URL: shown once, at creation, and stored only hashed. */
  secret: string;
}

interface TriggerFileContent {
  version: 1;
  triggers: TriggerRecord[];
}

export const TRIGGER_FILE = 'triggers.json';

/** `/hooks/triggers/<id>/<secret>`: the path of a trigger's URL on the control plane. */
export function triggerPath(id: string, secret: string): string {
  return `/hooks/triggers/${id}/${secret}`;
}

const ID_PATTERN = /^trg_[A-Za-z0-9]{16}$/;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function viewOf(record: TriggerRecord): TriggerView {
  const { id, name, action, flagId, environment, createdAt } = record;
  return { id, name, action, flagId, environment, createdAt };
}

/**
 * Triggers, persisted in `<dataDir>/state/triggers.json` (mode 0600), never in the flags repository: a
 * trigger's URL is a credential (it kills a flag), so its secret is kept as the keys' are, an HMAC-SHA-256
 * under the installation's pepper. Reads are in memory; writes are serialized and reach the disk atomically
 * before memory changes, so a deleted trigger's URL stops working once the delete has answered.
 */
export class TriggerStore {
  private content: TriggerFileContent;
  private byId = new Map<string, TriggerRecord>();
  private writes: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly file: string,
    private readonly hasher: KeyHasher,
    content: TriggerFileContent,
    private readonly now: () => Date,
  ) {
    this.content = content;
    this.index();
  }

  static async open(options: { dataDir: string; now?: () => Date }): Promise<TriggerStore> {
    const stateDir = path.join(options.dataDir, 'state');
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    const file = path.join(stateDir, TRIGGER_FILE);
    const content = checkContent(file, await readJsonStateFile(file));
    const pepper = await loadPepper(stateDir, content.triggers.length === 0);
    return new TriggerStore(file, new KeyHasher(pepper), content, options.now ?? (() => new Date()));
  }

  create(input: { org: string; flagId: string; environment: EnvironmentName; name?: string }): Promise<CreatedTrigger> {
    return this.write(() => {
      let id = newId();
      while (this.byId.has(id)) id = newId();
      const secret = randomBytes(32).toString('base64url');
      const record: TriggerRecord = {
        id,
        org: input.org,
        flagId: input.flagId,
        environment: input.environment,
        name: input.name ?? id,
        action: 'kill',
        secretHash: KeyHasher.encode(this.hasher.digest(secret)),
        createdAt: this.now().toISOString(),
      };
      return { next: [...this.content.triggers, record], result: { trigger: viewOf(record), secret } };
    });
  }

  /** The triggers of one flag in one environment, oldest first. */
  list(org: string, flagId: string, environment: EnvironmentName): TriggerView[] {
    return this.content.triggers.filter((t) => t.org === org && t.flagId === flagId && t.environment === environment).map(viewOf);
  }

  /** Deletes a trigger of the organisation; another organisation's, or none, is 404. */
  delete(org: string, id: string): Promise<TriggerView> {
    return this.write(() => {
      const record = this.byId.get(id);
      if (!record || record.org !== org) throw new NotFoundError(`trigger ${id}`);
      return { next: this.content.triggers.filter((t) => t.id !== id), result: viewOf(record) };
    });
  }

  /** The trigger whose URL this is, or null: an unknown id, a deleted trigger or a wrong secret. Constant time in the secret. */
  verify(id: string, secret: string): TriggerRecord | null {
    if (!ID_PATTERN.test(id) || !SECRET_PATTERN.test(secret)) return null;
    const record = this.byId.get(id);
    const stored = record && KeyHasher.decode(record.secretHash);
    if (!record || !stored) return null;
    return KeyHasher.equal(this.hasher.digest(secret), stored) ? record : null;
  }

  private write<T>(plan: () => { next: TriggerRecord[]; result: T }): Promise<T> {
    const run = async () => {
      const { next, result } = plan();
      const content: TriggerFileContent = { version: 1, triggers: next };
      await writeJsonStateFile(this.file, content);
      this.content = content;
      this.index();
      return result;
    };
    const result = this.writes.then(run, run);
    this.writes = result.catch(() => undefined);
    return result;
  }

  private index(): void {
    this.byId = new Map(this.content.triggers.map((t) => [t.id, t]));
  }
}

function newId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let id = 'trg_';
  for (const byte of randomBytes(16)) id += alphabet[byte % alphabet.length];
  return id;
}

function checkContent(file: string, data: unknown): TriggerFileContent {
  if (data === undefined) return { version: 1, triggers: [] };
  const fail = (where: string, what: string): never => {
    throw new Error(`${file}: ${where}: ${what}`);
  };
  const content = data as Partial<TriggerFileContent> | null;
  if (content === null || typeof content !== 'object' || content.version !== 1) return fail('version', 'expected 1');
  if (!Array.isArray(content.triggers)) return fail('triggers', 'expected an array');
  content.triggers.forEach((t, i) => {
    const ok =
      t !== null &&
      typeof t === 'object' &&
      ['id', 'org', 'flagId', 'name', 'secretHash', 'createdAt'].every(
        (f) => typeof (t as unknown as Record<string, unknown>)[f] === 'string',
      ) &&
      isEnvironmentName(t.environment) &&
      t.action === 'kill';
    if (!ok) fail(`triggers[${i}]`, 'expected { id, org, flagId, environment, name, action: "kill", secretHash, createdAt }');
  });
  return content as TriggerFileContent;
}
