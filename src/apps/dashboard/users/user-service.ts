import { randomBytes } from 'node:crypto';
import { ConflictError, NotFoundError } from '../../../foundations/errors/kinds.js';
import { type ControlState, type UserRecord, type UserStore, usernameKey } from '../../../foundations/state/index.js';
import { checkNewUser } from './new-user.js';
import { DEFAULT_COST, hashPassword, type ScryptCost, verifyPassword } from './password-hash.js';

export type { UserRecord } from '../../../foundations/state/index.js';

/** A user as the API shows it: never the hash. */
export type UserView = Omit<UserRecord, 'passwordHash'>;

export interface UserServiceOptions {
  /** Where users are kept. */
  state: Pick<ControlState, 'users'>;
  now?: () => Date;
  newId?: () => string;
  /** scrypt cost of new hashes; tests lower it, production keeps the default. */
  cost?: ScryptCost;
}

/**
 * Dashboard users, kept in the control plane's state (UserStore). Users may also be added by `flagops user add`
 * while the service runs (or by another instance sharing the state), so every operation that reads users by
 * name reads the store first; `byId`, on every dashboard request, answers from what was read last.
 */
export class UserService {
  private users: UserRecord[] = [];
  /** Reads started and installed, so a read that ends late never replaces one that started after it. */
  private reads = { started: 0, installed: 0 };
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly cost: ScryptCost;
  /** Checked against when the username is unknown, so a wrong name takes as long as a wrong password. */
  private decoy: Promise<string> | undefined;

  private constructor(
    private readonly store: UserStore,
    options: UserServiceOptions,
  ) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? (() => `usr_${randomBytes(8).toString('hex')}`);
    this.cost = options.cost ?? DEFAULT_COST;
    store.onChange(() => {
      this.refresh().catch(() => undefined); // the next read by name tries again
    });
  }

  static async open(options: UserServiceOptions): Promise<UserService> {
    const service = new UserService(options.state.users, options);
    await service.refresh();
    return service;
  }

  /** Reads the users again (the store reads its file again only when another process changed it). */
  async refresh(): Promise<void> {
    const read = ++this.reads.started;
    const users = await this.store.list();
    if (read < this.reads.installed) return;
    this.reads.installed = read;
    this.users = users;
  }

  /** The user of a session, from memory: the hot path of every dashboard request. */
  byId(id: string): UserView | undefined {
    const record = this.users.find((u) => u.id === id);
    return record && toView(record);
  }

  async list(org: string): Promise<UserView[]> {
    await this.refresh();
    return this.users.filter((u) => u.org === org).map(toView);
  }

  /** Creates a user of `org`. Usernames are unique in the whole installation, since sign-in asks only for one. */
  async create(org: string, input: unknown): Promise<UserView> {
    const user = checkNewUser(input);
    const passwordHash = await hashPassword(user.password, this.cost);
    const record: UserRecord = {
      id: this.newId(),
      org,
      username: user.username,
      name: user.name,
      passwordHash,
      createdAt: this.now().toISOString(),
      ...(user.role !== undefined ? { role: user.role } : {}),
    };
    const created = await this.store.create(record);
    await this.refresh();
    if (!created) throw new ConflictError(`username ${JSON.stringify(user.username)} is taken; choose another`);
    return toView(record);
  }

  /** Removes a user of `org`; another organisation's user is not found, like an unknown one. */
  async remove(org: string, id: string): Promise<UserView> {
    const removed = await this.store.remove(org, id);
    await this.refresh();
    if (!removed) throw new NotFoundError(`user ${JSON.stringify(id)}`);
    return toView(removed);
  }

  /** Whether an account has this username (as of the last read). */
  hasUsername(username: string): boolean {
    return this.users.some((u) => usernameKey(u.username) === usernameKey(username));
  }

  /** The user whose username and password these are, or null. Takes one scrypt either way. */
  async verify(username: string, password: string): Promise<UserView | null> {
    await this.refresh();
    const record = this.users.find((u) => usernameKey(u.username) === usernameKey(username));
    if (!record) {
      this.decoy ??= hashPassword('decoy password', this.cost);
      await verifyPassword(password, await this.decoy);
      return null;
    }
    return (await verifyPassword(password, record.passwordHash)) ? toView(record) : null;
  }
}

function toView(record: UserRecord): UserView {
  const { passwordHash: _hash, ...view } = record;
  return view;
}
