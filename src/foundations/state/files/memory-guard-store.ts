import { failuresAfter, type GuardCheck, type GuardCheckOutcome, type GuardStore } from '../guard-store.js';

/**
 * Guard state where the state is files: one service owns a data directory, so claims have nobody to be shared
 * with, and the last checks are kept in memory. After a restart each guard is checked again within its
 * interval, and a count of failed queries starts anew.
 */
export class MemoryGuardStore implements GuardStore {
  private readonly claims = new Map<string, number>();
  private readonly checks = new Map<string, GuardCheck>();

  async claim(org: string, id: string, now: number, until: number): Promise<boolean> {
    const key = `${org}\u0000${id}`;
    const held = this.claims.get(key);
    if (held !== undefined && held > now) return false;
    this.claims.set(key, until);
    return true;
  }

  async release(org: string, id: string): Promise<void> {
    this.claims.delete(`${org}\u0000${id}`);
  }

  async hold(org: string, id: string, until: number): Promise<void> {
    this.claims.set(`${org}\u0000${id}`, until);
  }

  async record(target: string, outcome: GuardCheckOutcome): Promise<GuardCheck> {
    const key = `${outcome.org}\u0000${target}`;
    const check: GuardCheck = { ...outcome, failures: failuresAfter(this.checks.get(key), outcome) };
    this.checks.set(key, check);
    return { ...check };
  }

  async list(org: string): Promise<GuardCheck[]> {
    return [...this.checks.values()].filter((check) => check.org === org).map((check) => ({ ...check }));
  }

  async remove(org: string, targets: readonly string[]): Promise<void> {
    for (const target of targets) {
      this.checks.delete(`${org}\u0000${target}`);
      for (const key of this.claims.keys()) if (key.startsWith(`${org}\u0000${target}`)) this.claims.delete(key);
    }
  }
}
