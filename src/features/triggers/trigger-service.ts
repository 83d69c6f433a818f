import { randomBytes } from 'node:crypto';
import type { EnvironmentName } from '@flagops/core';
import { KeyHasher } from '../../foundations/auth/key-hash.js';
import { NotFoundError } from '../../foundations/errors/kinds.js';
import type { ControlState, TriggerRecord, TriggerStore } from '../../foundations/state/index.js';

export type { TriggerRecord } from '../../foundations/state/index.js';

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
 * Triggers, kept in the control plane's state (TriggerStore), never in the flags repository: a trigger's URL is
 * a credential (it kills a flag), so its secret is kept as the keys' are, an HMAC-SHA-256 under the
 * installation's pepper. Reads are in memory; writes are serialized and durable before memory changes, so a
 * deleted trigger's URL stops working once the delete has answered. Triggers changed elsewhere (another
 * instance sharing the state) are read again when the store announces them.
 */
export class TriggerService {
  private triggers: TriggerRecord[] = [];
  private byId = new Map<string, TriggerRecord>();
  /** Writes and reloads, one at a time, so what is installed is never older than what was installed before. */
  private writes: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly store: TriggerStore,
    private readonly hasher: KeyHasher,
    triggers: TriggerRecord[],
    private readonly now: () => Date,
  ) {
    this.install(triggers);
    store.onChange(() => {
      this.serialized(async () => this.install(await this.store.list())).catch(() => undefined);
    });
  }

  static async open(options: { state: Pick<ControlState, 'triggers' | 'pepper'>; now?: () => Date }): Promise<TriggerService> {
    const triggers = await options.state.triggers.list();
    const pepper = await options.state.pepper.get({ mayCreate: triggers.length === 0 });
    return new TriggerService(options.state.triggers, new KeyHasher(pepper), triggers, options.now ?? (() => new Date()));
  }

  create(input: { org: string; flagId: string; environment: EnvironmentName; name?: string }): Promise<CreatedTrigger> {
    return this.serialized(async () => {
      for (;;) {
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
        const created = await this.store.create(record);
        this.install(await this.store.list());
        if (created) return { trigger: viewOf(record), secret };
      }
    });
  }

  /** The triggers of one flag in one environment, oldest first. */
  list(org: string, flagId: string, environment: EnvironmentName): TriggerView[] {
    return this.triggers.filter((t) => t.org === org && t.flagId === flagId && t.environment === environment).map(viewOf);
  }

  /** A trigger of the organisation (its flag and environment), or undefined. */
  get(org: string, id: string): TriggerRecord | undefined {
    const record = this.byId.get(id);
    return record?.org === org ? record : undefined;
  }

  /** Deletes a trigger of the organisation; another organisation's, or none, is 404. */
  delete(org: string, id: string): Promise<TriggerView> {
    return this.serialized(async () => {
      const removed = await this.store.remove(org, id);
      if (!removed) throw new NotFoundError(`trigger ${id}`);
      this.install(await this.store.list());
      return viewOf(removed);
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

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const result = this.writes.then(task, task);
    this.writes = result.catch(() => undefined);
    return result;
  }

  private install(triggers: TriggerRecord[]): void {
    this.triggers = triggers;
    this.byId = new Map(triggers.map((t) => [t.id, t]));
  }
}

function newId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let id = 'trg_';
  for (const byte of randomBytes(16)) id += alphabet[byte % alphabet.length];
  return id;
}
